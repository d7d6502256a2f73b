//! quire-server: the MySQL wire protocol (being written).
