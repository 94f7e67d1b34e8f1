// consumers BOOTSTRAP TOPIC PARTITION: the KIP-320 truncation consumers, KafkaJS's side. The commands
// and events are franz-go's (harness/clients/go/main.go), one per line (RESET: earliest, latest):
//
//   assign NAME RESET OFFSET           KafkaJS has no consumer without a group: a consumer of a group of
//                                      its own (nothing committed), positioned by seek() at OFFSET
//   subscribe NAME RESET GROUP [ISOLATION]
//                                      a member of GROUP, from the group's committed offset
//                                      (ISOLATION: read_uncommitted, the default, or read_committed)
//   position NAME                      answers "position": KafkaJS has no position(); the offset
//                                      eachBatch's uncommittedOffsets() would commit, as franz-go's
//                                      UncommittedOffsets (its last answer once the commit caught up)
//   commit NAME                        commits that offset (commitOffsets); answers with what the
//                                      admin's fetchOffsets (OffsetFetch) reads back
//   pause NAME / resume NAME           stop and restart fetching its partition (the position stays)
//   until NAME OFFSET                  the consumer stops once it delivered the record at OFFSET (its
//                                      partition paused); answers "held" then; a later until releases it
//   offsetsfortimes NAME TIMESTAMP     a client of its own asks admin.fetchTopicOffsetsByTimestamp
//   close NAME
//   exit
//
// A RESET of none and seekepoch are refused with `lacks` (LACKS: KafkaJS has no such API). Events:
// ready, record {consumer, offset, epoch, value}, error {consumer, code, message} (the consumer's
// CRASH events), reset {consumer, message} (KafkaJS's log of an out-of-range reset, evidence only),
// committed {consumer, offset, epoch}, position {consumer, offset, of}, held {consumer, offset},
// offset_for_time {consumer, timestamp, offset, epoch, found_timestamp, error}, closed, done,
// command_failed {command, exception, message, lacks}, exited. A record's epoch and a commit's are
// null: KafkaJS's KafkaMessage (types/index.d.ts) has no leader epoch and it commits with
// OffsetCommit v5 at most, before CommittedLeaderEpoch (src/protocol/requests/offsetCommit/).
//
// The clients run in a worker thread; the main thread only reads commands and enforces the exit bound.
// KafkaJS can spin its event loop without yielding (its fetcher loops on fetches that resolve at once,
// e.g. Runner.fetch's [] once the consumer stopped while FetchManager restarted its fetchers after the
// broker set changed: tulios/kafkajs#1384, #1387), which starves every timer and stdin read of that
// thread: the bound of `exit` must live on another one.
'use strict'

const { Worker, isMainThread, parentPort, workerData } = require('worker_threads')
const { CLIENT, emit, kafka, readLines } = require('./common')

const EXIT_MS = 15000

const LACKS = {
  none: "KafkaJS has no 'no reset' policy: subscribe's fromBeginning (true: earliest, false: latest) is its " +
    'only one, and it resets an out-of-range offset to it (src/consumer/consumerGroup.js ' +
    "recoverFromOffsetOutOfRange: 'Offset out of range, resetting to default offset')",
  seekepoch: 'KafkaJS seeks to an offset without a leader epoch: Consumer.seek(topicPartitionOffset: ' +
    'TopicPartitionOffset {topic, partition, offset}) (types/index.d.ts, src/consumer/index.js seek)',
}

class Lacks extends Error {
  constructor(message) {
    super(message)
    this.name = 'KafkaJSLacks'
  }
}

// A commit, or its read-back, is made again while KafkaJS raises an error it marks retriable (a
// coordinator or broker it lost during a failover), as an application does, as the harness's
// librdkafka driver does (harness/clients/drivers/kip320_consumers.py). Both share one RETRY_MS, short
// of the 30 s the scenes wait for the answer, so that a commit that keeps failing still answers (its
// command_failed) in time; and no attempt starts once the driver exits.
const RETRY_MS = 20000
const RETRY_BACKOFF_MS = 100

async function calledAgain(call, retried, deadline, stopped) {
  for (;;) {
    try {
      return await call()
    } catch (e) {
      if (!e.retriable || Date.now() >= deadline || stopped()) throw e
      retried.push(`${e.name}: ${e.message}`)
    }
    await new Promise(resolve => setTimeout(resolve, RETRY_BACKOFF_MS))
  }
}

function fromBeginning(reset) {
  if (reset === 'earliest' || reset === 'latest') return reset === 'earliest'
  if (reset === 'none') throw new Lacks(LACKS.none)
  throw new Error(`unknown reset ${reset} (earliest, latest)`)
}

class Consumers {
  constructor(bootstrap, topic, partition) {
    this.bootstrap = bootstrap
    this.topic = topic
    this.partition = partition
    this.consumers = new Map()
    this.chains = new Map() // each consumer's commands run in order; different consumers' at once
    this.until = new Map()
    this.exiting = false
  }

  // The main thread names them in `exited` if the worker cannot close them within the bound.
  reportOpen() {
    parentPort.postMessage({ open: [...this.consumers.keys()] })
  }

  handle(line) {
    const words = line.split(/\s+/)
    const name = words[1] ?? ''
    const done = (this.chains.get(name) ?? Promise.resolve())
      .then(() => this.run(words))
      .then(() => emit({ event: 'done', command: line }), e => emit({
        event: 'command_failed', command: line, exception: e.name ?? 'Error', message: e.message,
        lacks: e instanceof Lacks,
      }))
    this.chains.set(name, done)
  }

  async run(cmd) {
    if (cmd.length < 2) throw new Error(`command ${cmd.join(' ')}: too few words`)
    const [op, name] = cmd
    const c = this.consumers.get(name)
    const partitions = [{ topic: this.topic, partitions: [this.partition] }]
    switch (op) {
      case 'assign':
        return this.start(name, cmd[2], `kcts-kafkajs-assign-${name}-${process.pid}-${Date.now()}`,
          Number(cmd[3]), 'read_uncommitted')
      case 'seekepoch':
        throw new Lacks(LACKS.seekepoch)
      case 'subscribe':
        return this.start(name, cmd[2], cmd[3], null, cmd[4] ?? 'read_uncommitted')
      case 'until': {
        this.until.set(name, Number(cmd[2]))
        if (c && c.held) {
          c.held = false
          if (!c.paused) c.consumer.resume(partitions)
        }
        return
      }
      case 'position': {
        const offset = this.need(name, c).position()
        if (offset === null) throw new Error(`${name} has consumed nothing of partition ${this.partition}`)
        emit({ event: 'position', consumer: name, offset, of: 'uncommittedOffsets()' })
        return
      }
      case 'commit':
        return this.commit(name, this.need(name, c))
      case 'pause':
        this.need(name, c).paused = true
        c.consumer.pause(partitions)
        return
      case 'resume':
        this.need(name, c).paused = false
        if (!c.held) c.consumer.resume(partitions)
        return
      case 'offsetsfortimes':
        return this.offsetForTime(name, Number(cmd[2]))
      case 'close':
        if (c) {
          this.consumers.delete(name)
          this.reportOpen()
          await c.consumer.disconnect()
        }
        emit({ event: 'closed', consumer: name })
        return
      default:
        throw new Error(`unknown command ${op}`)
    }
  }

  need(name, c) {
    if (!c) throw new Error(`no consumer ${name}`)
    return c
  }

  async start(name, reset, group, offset, isolation) {
    const beginning = fromBeginning(reset)
    if (isolation !== 'read_committed' && isolation !== 'read_uncommitted') {
      throw new Error(`unknown isolation ${isolation} (read_uncommitted, read_committed)`)
    }
    const client = kafka(this.bootstrap, name, { onEntry: (namespace, level, message, extra) => {
      if (/out of range/i.test(message)) emit({ event: 'reset', consumer: name, message, ...extra })
    } })
    // Leader changes are noticed through metadata; the default age (5 min) would hide them.
    const consumer = client.consumer({ groupId: group, metadataMaxAge: 1000, readUncommitted: isolation !== 'read_committed' })
    const c = { name, group, consumer, held: false, paused: false, uncommitted: null, last: null, seeking: offset !== null }
    c.position = () => {
      const topics = c.uncommitted ? c.uncommitted().topics : []
      const t = topics.find(t => t.topic === this.topic)
      const p = t && t.partitions.find(p => Number(p.partition) === this.partition)
      if (p) c.last = Number(p.offset)
      return c.last
    }
    this.consumers.set(name, c)
    this.reportOpen()
    consumer.on(consumer.events.CRASH, ({ payload }) => emit({
      event: 'error', consumer: name, code: payload.error.name, message: payload.error.message,
      restart: payload.restart,
    }))
    // KafkaJS seeks only within a running group, and a consumer whose join crashed (a coordinator not
    // yet available) has none when run() returns: it runs again on its own in a new one (index.js
    // onCrash's restart). So the seek is made at each join, the listener running before the first fetch
    // (ConsumerGroup.joinAndSync emits GROUP_JOIN), until the consumer was handed a batch.
    consumer.on(consumer.events.GROUP_JOIN, () => {
      if (c.seeking) consumer.seek({ topic: this.topic, partition: this.partition, offset: String(offset) })
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [this.topic], fromBeginning: beginning })
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: payload => this.batch(c, payload) })
  }

  async batch(c, { batch, resolveOffset, heartbeat, pause, isRunning, isStale, uncommittedOffsets }) {
    if (batch.topic !== this.topic || batch.partition !== this.partition) return
    c.seeking = false
    c.uncommitted = uncommittedOffsets
    for (const m of batch.messages) {
      // Held, closed or sought meanwhile: the rest is fetched again from the last resolved offset.
      if (c.held || !isRunning() || isStale()) break
      const offset = Number(m.offset)
      emit({ event: 'record', consumer: c.name, offset, epoch: null, value: m.value === null ? null : m.value.toString() })
      resolveOffset(m.offset)
      const last = this.until.get(c.name)
      if (last !== undefined && offset >= last) {
        c.held = true
        pause()
        emit({ event: 'held', consumer: c.name, offset })
        break
      }
    }
    await heartbeat()
  }

  async commit(name, c) {
    const sent = c.position()
    const retried = []
    const deadline = Date.now() + RETRY_MS
    const stopped = () => this.exiting
    if (sent !== null) {
      await calledAgain(() => c.consumer.commitOffsets([
        { topic: this.topic, partition: this.partition, offset: String(sent) }]), retried, deadline, stopped)
    }
    const admin = await this.admin()
    const [read] = await calledAgain(() => admin.fetchOffsets({ groupId: c.group, topics: [this.topic] }), retried,
      deadline, stopped)
    const p = read && read.partitions.find(p => Number(p.partition) === this.partition)
    if (!p) throw new Error(`fetchOffsets answered no partition ${this.partition}`)
    emit({ event: 'committed', consumer: name, offset: Number(p.offset), epoch: null, sent, retried })
  }

  async admin() {
    if (!this.adminClient) {
      const admin = kafka(this.bootstrap, 'kcts-kafkajs-admin').admin()
      await admin.connect()
      this.adminClient = admin
    }
    return this.adminClient
  }

  async offsetForTime(name, timestamp) {
    const admin = kafka(this.bootstrap, name).admin()
    await admin.connect()
    try {
      const found = await admin.fetchTopicOffsetsByTimestamp(this.topic, timestamp)
      const p = found.find(p => Number(p.partition) === this.partition)
      if (!p) throw new Error(`fetchTopicOffsetsByTimestamp answered no partition ${this.partition}`)
      emit({ event: 'offset_for_time', consumer: name, timestamp, offset: Number(p.offset), epoch: null,
        found_timestamp: null, error: null })
    } finally {
      await admin.disconnect()
    }
  }

  // The worker's side of `exit`: the commands under way end (a commit retries no more), then every
  // client leaves. The main thread bounds it (main's EXIT_MS), as Java's close(Duration) is.
  async exit() {
    this.exiting = true
    await Promise.allSettled([...this.chains.values()])
    await Promise.allSettled([...this.consumers.values()].map(c => c.consumer.disconnect()))
    if (this.adminClient) await this.adminClient.disconnect().catch(() => {})
    parentPort.postMessage({ closed: true })
  }
}

// The worker thread: the clients, driven by the lines the main thread passes on.
function serve([bootstrap, topic, partition]) {
  const consumers = new Consumers(bootstrap, topic, Number(partition))
  parentPort.on('message', line => {
    if (line === 'exit') consumers.exit()
    else consumers.handle(line)
  })
}

// The main thread: reads commands, writes the worker's output, and exits EXIT_MS after `exit` (or the
// end of its input) at the latest, whatever the worker's event loop is doing.
function main(args) {
  if (args.length !== 3) {
    process.stderr.write('consumers BOOTSTRAP TOPIC PARTITION\n')
    process.exit(2)
  }
  const worker = new Worker(__filename, { workerData: { consumers: args } })
  let open = []
  const exited = unclosed => {
    emit(unclosed ? { event: 'exited', unclosed } : { event: 'exited' })
    process.exit(0)
  }
  worker.on('message', m => {
    if (m.stream) process[m.stream].write(m.text)
    else if (m.open) open = m.open
    else if (m.closed) exited(null)
  })
  // An exception the worker did not catch ends the driver, as it would a driver of one thread.
  worker.on('error', e => {
    process.stderr.write(`consumers worker: ${e.stack ?? e}\n`)
    process.exit(1)
  })
  let exiting = false
  const exit = () => {
    if (!exiting) {
      exiting = true
      setTimeout(() => exited(open), EXIT_MS)
      worker.postMessage('exit')
    }
  }
  readLines(line => {
    if (line === 'exit') exit()
    else if (line && !exiting) worker.postMessage(line)
  }, exit)
  emit({ event: 'ready', client: CLIENT })
}

if (!isMainThread && workerData && workerData.consumers) serve(workerData.consumers)

module.exports = { main }
