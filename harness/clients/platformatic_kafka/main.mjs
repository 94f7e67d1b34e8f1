// kcts's @platformatic/kafka drivers: the same commands and JSON events as the Java, librdkafka and
// franz-go ones (harness/clients/go/main.go), so one scene drives every client stack alike.
//
//   node main.mjs MARKER consumers BOOTSTRAP TOPIC PARTITION   (consumers.mjs)
//   node main.mjs MARKER producer BOOTSTRAP TOPIC PREFIX       (producer.mjs)
//   node main.mjs MARKER copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS
//                                                              (copier.mjs)
//   node main.mjs MARKER version
//
// MARKER is the harness session's (the reaper finds the process by it); it is not read.
const [, , , role, ...args] = process.argv
const roles = { consumers: './consumers.mjs', producer: './producer.mjs', copier: './copier.mjs' }
if (role === 'version') {
  console.log((await import('./common.mjs')).version)
} else if (roles[role]) {
  ;(await import(roles[role])).main(args)
} else {
  process.stderr.write('usage: node main.mjs MARKER consumers|producer|copier|version ARGS\n')
  process.exit(2)
}
