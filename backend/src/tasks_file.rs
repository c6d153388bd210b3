//! The tasks file (Minsky Fig 5-5): the text format the front end hands to the backend.
