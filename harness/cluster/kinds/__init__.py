"""The kinds of target kcts judges, one module each in this package.

A kind's module defines `KIND`, a `harness.cluster.model.TargetKind`: everything that varies by the
kind of a target, as fields of that one value (its name; how `--target`, `--backend` and a profile
name it; what `--backend` builds from the options; how a profile's version is read; what the harness
can do to it). It imports the target model only, so it sits below everything that asks it.

The module that serves the kind holds its Cluster class and its `BACKEND`
(`harness.cluster.backend.Backend`: the kind, how it is prepared and made into a `Cluster`, and any
side cluster of its own kind), and is the one other module that names the `KIND`, for the target of
a cluster made without one. `harness.cluster.registry` lists every `BACKEND` in one static tuple, the
only way a kind is found. Adding a kind of target is three things: its module here, the module that
serves it (with `BACKEND`), and one line in `harness/cluster/registry.py`. Nothing else names a kind:
the target parser, the factory and the command line ask the registry, checks ask a spec's
`Capabilities` or `apache_release`.
"""
