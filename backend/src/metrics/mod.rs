//! Link utilization, channel load, congestion, dilation and Chittor's path contention level.
