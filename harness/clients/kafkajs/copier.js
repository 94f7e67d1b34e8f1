// copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS: a
// consume-transform-produce loop as a member of GROUP, KafkaJS's twin of harness/clients/go/copier.go.
// KafkaJS hands a consumer one partition's batch at a time (eachBatch): each transaction copies up to
// TRANSACTION_SIZE records of one batch to partition 0 of SINK and commits the consumed offset with
// transaction.sendOffsets (AddOffsetsToTxn, TxnOffsetCommit), as its documentation's exactly-once
// example does. An aborted transaction is redone: the consumer seeks back to its first record.
// SOURCE may name several topics, comma separated.
//
// Events: transaction_committed {records, copied} | transaction_aborted {records, error},
// poll_error {code, message} (the consumer's CRASH events), done {outcome: copied | timed_out |
// failed, copied}.
'use strict'

const { emit, kafka } = require('./common')

const CLOSE_MS = 10000

function main(args) {
  if (args.length !== 8) {
    process.stderr.write('copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS\n')
    process.exit(2)
  }
  const [bootstrap, source, sink, group, transactionalId] = args
  const [wanted, size, timeoutMs] = args.slice(5).map(Number)
  if ([wanted, size, timeoutMs].some(Number.isNaN)) {
    process.stderr.write('MESSAGES, TRANSACTION_SIZE and TIMEOUT_MS are numbers\n')
    process.exit(2)
  }
  const client = kafka(bootstrap, 'kcts-kafkajs-copier')
  const producer = client.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
  const consumer = client.consumer({ groupId: group, readUncommitted: false, metadataMaxAge: 1000 })
  let copied = 0
  let finished = false

  // Called from eachBatch too, where consumer.disconnect() would wait for that very batch to end:
  // the clients are closed once the handler has returned, and the process ends in at most CLOSE_MS.
  const finish = (outcome, message) => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    emit({ event: 'done', outcome, copied, ...(message ? { message } : {}) })
    const code = outcome === 'copied' ? 0 : 1
    setTimeout(() => process.exit(code), CLOSE_MS).unref()
    setImmediate(async () => {
      await consumer.disconnect().catch(() => {})
      await producer.disconnect().catch(() => {})
      process.exit(code)
    })
  }
  const timer = setTimeout(() => finish('timed_out'), timeoutMs)

  consumer.on(consumer.events.CRASH, ({ payload }) => emit({
    event: 'poll_error', code: payload.error.name, message: payload.error.message,
  }))

  const copy = async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
    if (finished || !isRunning() || isStale()) return
    const records = batch.messages.slice(0, Math.min(size, wanted - copied))
    if (records.length === 0) return
    const last = records[records.length - 1].offset
    const transaction = await producer.transaction()
    try {
      await transaction.send({ topic: sink, messages: records.map(m => ({ partition: 0, key: m.key, value: m.value })) })
      await transaction.sendOffsets({ consumerGroupId: group, topics: [
        { topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(last) + 1n).toString() }] },
      ] })
      await transaction.commit()
    } catch (e) {
      emit({ event: 'transaction_aborted', records: records.length, error: `${e.name}: ${e.message}` })
      try {
        await transaction.abort()
      } catch (abortError) {
        return finish('failed', `${abortError.name}: ${abortError.message}`)
      }
      consumer.seek({ topic: batch.topic, partition: batch.partition, offset: records[0].offset })
      return
    }
    resolveOffset(last)
    copied += records.length
    emit({ event: 'transaction_committed', records: records.length, copied })
    if (copied >= wanted) return finish('copied')
    await heartbeat()
  }

  const start = async () => {
    await producer.connect()
    await consumer.connect()
    await consumer.subscribe({ topics: source.split(','), fromBeginning: true })
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: copy })
  }
  start().catch(e => finish('failed', `${e.name}: ${e.message}`))
}

module.exports = { main }
