// producer BOOTSTRAP TOPIC PREFIX: an idempotent KafkaJS producer (acks all) writing "<PREFIX>.<n>" to
// partition 0 of TOPIC, about 200 a second, until its input says exit; then it waits for what it sent.
// Events, in VerifiableProducer's words: ready, producer_send_success {value, offset},
// producer_send_error {value, exception, message}, stopped {sent, unreported}.
//
// KafkaJS has no linger and orders nothing across concurrent send() calls (each awaits metadata
// before it queues its request), so the driver lingers itself: one send() at a time, of every value
// made while the previous one was out (at most IN_FLIGHT), in order. One send() to one partition is
// one record batch, so its values are at baseOffset, baseOffset + 1, ... (RecordMetadata has only the
// batch's base offset).
'use strict'

const { CLIENT, emit, kafka, readLines } = require('./common')

const IN_FLIGHT = 200 // values made but not yet answered, at most: keeps the window small and steady
const EVERY_MS = 5

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function main(args) {
  if (args.length !== 3) {
    process.stderr.write('producer BOOTSTRAP TOPIC PREFIX\n')
    process.exit(2)
  }
  const [bootstrap, topic, prefix] = args
  // A paused leader answers nothing: give up on a request after 10 s, not the default, and retry.
  const producer = kafka(bootstrap, 'kcts-kafkajs-producer', { requestTimeout: 10000 })
    .producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, metadataMaxAge: 1000 })
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
        const [meta] = await producer.send({ topic, acks: -1, timeout: 10000,
          messages: values.map(value => ({ partition: 0, value })) })
        const base = BigInt(meta.baseOffset)
        values.forEach((value, i) => emit({ event: 'producer_send_success', value, offset: Number(base + BigInt(i)) }))
      } catch (e) {
        for (const value of values) {
          emit({ event: 'producer_send_error', value, exception: e.name ?? 'Error', message: e.message })
        }
      }
      unreported -= values.length
    }
  }

  producer.connect().then(async () => {
    emit({ event: 'ready', client: CLIENT })
    const sending = send()
    await make()
    await Promise.race([sending, sleep(60000)])
    emit({ event: 'stopped', sent: made, unreported })
    await producer.disconnect().catch(() => {})
    process.exit(0)
  }, e => {
    process.stderr.write(`kafkajs producer could not connect: ${e.name}: ${e.message}\n`)
    process.exit(1)
  })
}

module.exports = { main }
