"""Client drivers that are Python programs, run under the interpreter of the client version tested."""
