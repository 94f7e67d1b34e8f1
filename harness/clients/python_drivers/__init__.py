"""kcts's drivers of the pure-Python client libraries (kafka-python, aiokafka): one module per client
and role, run by the interpreter of the client's cached virtualenv (harness.clients.pypi_env). Each
speaks the role's commands and events as the reference drivers do (harness/clients/java/
Kip320Consumers.java, harness/clients/go/). They import no client but their own: the harness's
confluent-kafka is not what they judge."""
