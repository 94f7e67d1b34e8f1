"""How every Kafka node of the harness logs, local or in a container: one line per event to stdout."""

LOG4J2_PROPERTIES = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = org.apache.kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = INFO
"""

# Kafka 3.9 logs through reload4j (log4j 1.x); the same layout, to the same stdout.
LOG4J1_PROPERTIES = """\
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
