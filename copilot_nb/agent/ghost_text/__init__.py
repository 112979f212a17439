"""Completions while the user types: the post-processing of a model's answer (`postprocess`),
which model completes (`model_choice`), and the service that answers the front end's requests on the
live channel (`service`), with the kernel's context built by `tools/kernel/completion_context`."""
