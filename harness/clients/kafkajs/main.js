// kcts's KafkaJS drivers: the same commands and JSON events as the Java, librdkafka and franz-go ones
// (harness/clients/go/main.go), so one scene drives every client stack alike.
//
//   node main.js MARKER consumers BOOTSTRAP TOPIC PARTITION   (consumers.js)
//   node main.js MARKER producer BOOTSTRAP TOPIC PREFIX       (producer.js)
//   node main.js MARKER copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS
//                                                             (copier.js)
//   node main.js MARKER version
//
// MARKER is the harness session's (the reaper finds the process by it); it is not read.
'use strict'

const roles = {
  consumers: () => require('./consumers'),
  producer: () => require('./producer'),
  copier: () => require('./copier'),
}

const [, , , role, ...args] = process.argv
if (role === 'version') {
  console.log(require('./common').version)
} else if (roles[role]) {
  roles[role]().main(args)
} else {
  process.stderr.write('usage: node main.js MARKER consumers|producer|copier|version ARGS\n')
  process.exit(2)
}
