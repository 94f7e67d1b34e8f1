// copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS: a
// consume-transform-produce loop as a member of GROUP, @platformatic/kafka's twin of
// harness/clients/go/copier.go. Each transaction copies what its stream delivered (up to
// TRANSACTION_SIZE records, waiting at most 2 s for them) to partition 0 of SINK and commits the
// consumed offsets in it: addConsumer, then addOffset of each partition's last message (its
// TxnOffsetCommit). An aborted transaction is redone: the stream is closed and consumed again from
// the group's committed offsets. SOURCE may name several topics, comma separated.
//
// Events: transaction_committed {records, copied} | transaction_aborted {records, error},
// poll_error {code, message} (the stream's error events), done {outcome: copied | timed_out |
// failed, copied}.
import { Consumer, FetchIsolationLevels, Producer } from '@platformatic/kafka'
import { brokers, describe, emit } from './common.mjs'

const GATHER_MS = 2000

export function main(args) {
  if (args.length !== 8) {
    process.stderr.write('copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS\n')
    process.exit(2)
  }
  const [bootstrap, source, sink, groupId, transactionalId] = args
  const [wanted, size, timeoutMs] = args.slice(5).map(Number)
  if ([wanted, size, timeoutMs].some(Number.isNaN)) {
    process.stderr.write('MESSAGES, TRANSACTION_SIZE and TIMEOUT_MS are numbers\n')
    process.exit(2)
  }
  const bootstrapBrokers = brokers(bootstrap)
  const consumer = new Consumer({ clientId: 'kcts-platformatic-copier', bootstrapBrokers, groupId, metadataMaxAge: 1000 })
  const producer = new Producer({ clientId: 'kcts-platformatic-copier', bootstrapBrokers, transactionalId,
    idempotent: true })
  const deadline = Date.now() + timeoutMs
  let copied = 0
  let buffered = []
  let arrived = () => {}
  let stream = null

  const consume = async () => {
    stream = await consumer.consume({ topics: source.split(','), mode: 'committed', fallbackMode: 'earliest',
      autocommit: false, isolationLevel: FetchIsolationLevels.READ_COMMITTED })
    stream.on('error', e => emit({ event: 'poll_error', ...describe(e) }))
    stream.on('data', m => {
      buffered.push(m)
      arrived()
    })
  }

  // Up to `limit` delivered records, waiting at most GATHER_MS (or until the deadline) for them.
  const gather = async limit => {
    const until = Math.min(Date.now() + GATHER_MS, deadline)
    while (buffered.length < limit && Date.now() < until) {
      await new Promise(resolve => {
        arrived = resolve
        setTimeout(resolve, until - Date.now())
      })
    }
    return buffered.splice(0, limit)
  }

  const finish = async (outcome, message) => {
    emit({ event: 'done', outcome, copied, ...(message ? { message } : {}) })
    if (stream) await stream.close().catch(() => {})
    await consumer.close(true).catch(() => {})
    await producer.close().catch(() => {})
    process.exit(outcome === 'copied' ? 0 : 1)
  }

  const run = async () => {
    await consume()
    while (copied < wanted) {
      if (Date.now() >= deadline) return finish('timed_out')
      const records = await gather(Math.min(size, wanted - copied))
      if (records.length === 0) continue
      const transaction = await producer.beginTransaction()
      try {
        await transaction.send({ messages: records.map(m => ({ topic: sink, partition: 0, key: m.key, value: m.value })) })
        await transaction.addConsumer(consumer)
        const lasts = new Map(records.map(m => [`${m.topic}:${m.partition}`, m]))
        for (const m of lasts.values()) await transaction.addOffset(m)
        await transaction.commit()
      } catch (e) {
        const { code, message } = describe(e)
        emit({ event: 'transaction_aborted', records: records.length, error: `${code}: ${message}` })
        try {
          await transaction.abort()
        } catch (abortError) {
          return finish('failed', describe(abortError).message)
        }
        await stream.close().catch(() => {})
        buffered = []
        await consume()
        continue
      }
      copied += records.length
      emit({ event: 'transaction_committed', records: records.length, copied })
    }
    return finish('copied')
  }
  run().catch(e => finish('failed', describe(e).message))
}
