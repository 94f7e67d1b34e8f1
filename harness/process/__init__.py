"""The process floor: how the harness starts and talks to every child process.

- `spawn`: `die_with_parent` (PR_SET_PDEATHSIG) and `spawn`, the one `Popen` of the harness.
- `ports`: `free_port`, a free TCP port on loopback.
- `events`: the one line format every child prints, `{"event": "<name>", ...fields}`.
- `child`: the child side of a worker (a spec in, event lines out, commands in).
- `worker`: the parent side, `WorkerProcess`, and `python_command` for Python children.
- `jvm`: the one `java` command builder, for brokers and Java clients alike.
- `cds`: where a classpath's class-data-sharing archive lives.

Everything here takes plain values (commands, classpaths, paths): it sits below the Kafka
distribution and the clusters, so that both of them, and the clients, can start processes alike.
"""
