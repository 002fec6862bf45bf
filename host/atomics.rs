//! Every atomic operation, type, scope and ordering, checked against a sequential model.
