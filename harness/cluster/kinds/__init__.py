"""The kinds of target kcts judges, one module each in this package.

Adding a kind of target is adding one module here that defines `KIND` (a
`harness.cluster.target.TargetKind`: its name, how `--target` and `--backend` spell it, what the
harness can do to it) and `BACKEND` (a `harness.cluster.factory.Backend`: how it is prepared and
made into a `Cluster`). The target model, the factory and the command line ask
`harness.cluster.target.kinds()`; none of them names a backend.

The modules are found by name at first use, as pytest finds its plugins, so nothing below imports
them: each imports the target model and the factory, and its backend inside `make`.
"""
