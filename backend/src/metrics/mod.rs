//! Link utilization, channel load, congestion and dilation, and Chittor's path contention level.

pub mod utilization;
