// producer BOOTSTRAP TOPIC PREFIX: an idempotent @platformatic/kafka producer (acks all, which its
// idempotence forces) writing "<PREFIX>.<n>" to partition 0 of TOPIC, about 200 a second, until its
// input says exit; then it waits for what it sent. Events, in VerifiableProducer's words: ready,
// producer_send_success {value, offset}, producer_send_error {value, exception, message}, stopped
// {sent, unreported}. As the KafkaJS driver, it lingers itself: one send() at a time, of every value
// made while the previous one was out, in order; one send() to one partition is one record batch, so
// its values are at the answer's baseOffset, baseOffset + 1, ...
import { Producer } from '@platformatic/kafka'
import { CLIENT, brokers, describe, emit, readLines } from './common.mjs'

const IN_FLIGHT = 200 // sends not yet answered, at most: keeps the window small and steady, as the others do
const EVERY_MS = 5

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

export function main(args) {
  if (args.length !== 3) {
    process.stderr.write('producer BOOTSTRAP TOPIC PREFIX\n')
    process.exit(2)
  }
  const [bootstrap, topic, prefix] = args
  // A paused leader answers nothing: give up on a request after 10 s, not the default, and retry.
  const producer = new Producer({ clientId: 'kcts-platformatic-producer', bootstrapBrokers: brokers(bootstrap),
    idempotent: true, timeout: 10000, metadataMaxAge: 1000, autocreateTopics: false })
  let stop = false
  let made = 0
  let queued = []
  let unreported = 0
  readLines(line => { if (line === 'exit') stop = true }, () => { stop = true })

  const make = async () => {
    while (!stop) {
      if (unreported < IN_FLIGHT) {
        queued.push(`${prefix}.${made++}`)
        unreported++
      }
      await sleep(EVERY_MS)
    }
  }

  const send = async () => {
    while (!stop || queued.length > 0) {
      if (queued.length === 0) {
        await sleep(EVERY_MS)
        continue
      }
      const values = queued
      queued = []
      try {
        const { offsets } = await producer.send({
          messages: values.map(value => ({ topic, partition: 0, value: Buffer.from(value) })) })
        const base = BigInt(offsets[0].offset)
        values.forEach((value, i) => emit({ event: 'producer_send_success', value, offset: Number(base + BigInt(i)) }))
      } catch (e) {
        for (const value of values) {
          emit({ event: 'producer_send_error', value, exception: e.name ?? 'Error', message: describe(e).message })
        }
      }
      unreported -= values.length
    }
  }

  const run = async () => {
    emit({ event: 'ready', client: CLIENT })
    const sending = send()
    await make()
    await Promise.race([sending, sleep(60000)])
    emit({ event: 'stopped', sent: made, unreported })
    await producer.close().catch(() => {})
    process.exit(0)
  }
  run()
}
