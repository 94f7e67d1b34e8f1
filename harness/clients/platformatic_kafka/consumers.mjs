// consumers BOOTSTRAP TOPIC PARTITION: the KIP-320 truncation consumers, @platformatic/kafka's side. The
// commands and events are franz-go's (harness/clients/go/main.go), one per line (RESET: earliest,
// latest, none; none is its fallbackMode 'fail'):
//
//   assign NAME RESET OFFSET           the client has no consumer without a group: a Consumer of a group
//                                      of its own, consume() in mode 'manual' from OFFSET
//   subscribe NAME RESET GROUP [ISOLATION]
//                                      a member of GROUP, consume() in mode 'committed'
//                                      (ISOLATION: read_uncommitted, the default, or read_committed)
//   position NAME                      answers "position": it has no position(); the stream's
//                                      offsetsToFetch, the offset its next Fetch asks for
//   commit NAME                        commit() of the last message it delivered (the message's own
//                                      commit, its offset + 1); answers with what the admin's
//                                      listConsumerGroupOffsets (OffsetFetch) reads back
//   pause NAME / resume NAME           stop and restart its stream (the position stays)
//   until NAME OFFSET                  the stream stops once it delivered the record at OFFSET; answers
//                                      "held" then; a later until resumes it
//   offsetsfortimes NAME TIMESTAMP     an Admin of its own asks listOffsets for TIMESTAMP
//   close NAME
//   exit
//
// seekepoch is refused with `lacks` (LACKS). Events: ready, record {consumer, offset, epoch, value}
// (epoch: the message's leaderEpoch, its batch's PartitionLeaderEpoch), error {consumer, code,
// message} (the stream's or the consumer's error events: the stream is then destroyed), committed
// {consumer, offset, epoch}, position {consumer, offset, of}, held {consumer, offset}, offset_for_time
// {consumer, timestamp, offset, epoch, found_timestamp, error}, closed, done, command_failed {command,
// exception, message, lacks}, exited.
import { Admin, Consumer, FetchIsolationLevels } from '@platformatic/kafka'
import { CLIENT, brokers, describe, emit, readLines } from './common.mjs'

const EXIT_MS = 15000

const LACKS = {
  seekepoch: "@platformatic/kafka positions a stream without a leader epoch: consume()'s offsets (mode 'manual') " +
    'are TopicWithPartitionAndOffset {topic, partition, offset} (dist/clients/base/types.d.ts), and it has no seek',
}
const FALLBACK = { earliest: 'earliest', latest: 'latest', none: 'fail' }
const ISOLATION = { read_uncommitted: FetchIsolationLevels.READ_UNCOMMITTED, read_committed: FetchIsolationLevels.READ_COMMITTED }

class Lacks extends Error {
  constructor(message) {
    super(message)
    this.name = 'PlatformaticKafkaLacks'
  }
}

class Consumers {
  constructor(bootstrap, topic, partition) {
    this.bootstrap = bootstrap
    this.topic = topic
    this.partition = partition
    this.key = `${topic}:${partition}`
    this.consumers = new Map()
    this.chains = new Map() // each consumer's commands run in order; different consumers' at once
    this.until = new Map()
  }

  handle(line) {
    const words = line.split(/\s+/)
    const name = words[1] ?? ''
    const done = (this.chains.get(name) ?? Promise.resolve())
      .then(() => this.run(words))
      .then(() => emit({ event: 'done', command: line }), e => emit({
        event: 'command_failed', command: line, exception: e.name ?? 'Error', message: describe(e).message,
        lacks: e instanceof Lacks,
      }))
    this.chains.set(name, done)
  }

  async run(cmd) {
    if (cmd.length < 2) throw new Error(`command ${cmd.join(' ')}: too few words`)
    const [op, name] = cmd
    const c = this.consumers.get(name)
    switch (op) {
      case 'assign':
        return this.start(name, cmd[2], `kcts-platformatic-assign-${name}-${process.pid}-${Date.now()}`,
          { mode: 'manual', offsets: [{ topic: this.topic, partition: this.partition, offset: BigInt(cmd[3]) }] },
          'read_uncommitted')
      case 'seekepoch':
        throw new Lacks(LACKS.seekepoch)
      case 'subscribe':
        return this.start(name, cmd[2], cmd[3], { mode: 'committed' }, cmd[4] ?? 'read_uncommitted')
      case 'until': {
        this.until.set(name, Number(cmd[2]))
        if (c && c.held) {
          c.held = false
          if (!c.paused) c.stream.resume()
        }
        return
      }
      case 'position': {
        const offset = this.need(name, c).stream.offsetsToFetch.get(this.key)
        if (offset === undefined) throw new Error(`${name} has no position in partition ${this.partition}`)
        emit({ event: 'position', consumer: name, offset: Number(offset), of: 'offsetsToFetch' })
        return
      }
      case 'commit':
        return this.commit(name, this.need(name, c))
      case 'pause':
        this.need(name, c).paused = true
        c.stream.pause()
        return
      case 'resume':
        this.need(name, c).paused = false
        if (!c.held) c.stream.resume()
        return
      case 'offsetsfortimes':
        return this.offsetForTime(name, Number(cmd[2]))
      case 'close':
        if (c) {
          this.consumers.delete(name)
          await c.stream.close().catch(() => {})
          await c.consumer.close(true)
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

  async start(name, reset, groupId, position, isolation) {
    const fallbackMode = FALLBACK[reset]
    if (!fallbackMode) throw new Error(`unknown reset ${reset} (earliest, latest, none)`)
    if (!(isolation in ISOLATION)) throw new Error(`unknown isolation ${isolation} (read_uncommitted, read_committed)`)
    // Leader changes are noticed through metadata; a long age would hide them.
    const consumer = new Consumer({ clientId: name, bootstrapBrokers: brokers(this.bootstrap), groupId, metadataMaxAge: 1000 })
    const c = { name, groupId, consumer, stream: null, held: false, paused: false, last: null }
    consumer.on('error', e => emit({ event: 'error', consumer: name, ...describe(e) }))
    const stream = await consumer.consume({ topics: [this.topic], ...position, fallbackMode, autocommit: false,
      isolationLevel: ISOLATION[isolation] })
    c.stream = stream
    this.consumers.set(name, c)
    stream.on('error', e => emit({ event: 'error', consumer: name, ...describe(e) }))
    stream.on('data', m => this.deliver(c, m))
  }

  deliver(c, m) {
    if (m.topic !== this.topic || m.partition !== this.partition) return
    const offset = Number(m.offset)
    c.last = m
    emit({ event: 'record', consumer: c.name, offset, epoch: m.leaderEpoch,
      value: m.value === undefined || m.value === null ? null : m.value.toString() })
    const last = this.until.get(c.name)
    if (last !== undefined && offset >= last) {
      c.held = true
      c.stream.pause()
      emit({ event: 'held', consumer: c.name, offset })
    }
  }

  async commit(name, c) {
    if (c.last) await c.last.commit()
    const admin = await this.admin()
    const [group] = await admin.listConsumerGroupOffsets({ groups: [c.groupId], requireStable: true })
    const t = group && group.topics.find(t => t.name === this.topic)
    const p = t && t.partitions.find(p => p.partitionIndex === this.partition)
    if (!p) throw new Error(`listConsumerGroupOffsets answered no partition ${this.partition}`)
    emit({ event: 'committed', consumer: name, offset: Number(p.committedOffset), epoch: p.committedLeaderEpoch,
      sent: c.last ? Number(c.last.offset) + 1 : null })
  }

  async admin() {
    if (!this.adminClient) {
      this.adminClient = new Admin({ clientId: 'kcts-platformatic-admin', bootstrapBrokers: brokers(this.bootstrap) })
    }
    return this.adminClient
  }

  async offsetForTime(name, timestamp) {
    const admin = new Admin({ clientId: name, bootstrapBrokers: brokers(this.bootstrap) })
    try {
      const topics = await admin.listOffsets({ topics: [
        { name: this.topic, partitions: [{ partitionIndex: this.partition, timestamp: BigInt(timestamp) }] }] })
      const t = topics.find(t => t.name === this.topic)
      const p = t && t.partitions.find(p => p.partitionIndex === this.partition)
      if (!p) throw new Error(`listOffsets answered no partition ${this.partition}`)
      emit({ event: 'offset_for_time', consumer: name, timestamp, offset: Number(p.offset), epoch: p.leaderEpoch,
        found_timestamp: Number(p.timestamp), error: null })
    } finally {
      await admin.close()
    }
  }

  // Bounded, as Java's close(Duration) is: a client whose brokers are gone may never finish leaving.
  async exit() {
    setTimeout(() => {
      emit({ event: 'exited', unclosed: [...this.consumers.keys()] })
      process.exit(0)
    }, EXIT_MS)
    await Promise.allSettled([...this.chains.values()])
    await Promise.allSettled([...this.consumers.values()].map(async c => {
      await c.stream.close().catch(() => {})
      await c.consumer.close(true)
    }))
    if (this.adminClient) await this.adminClient.close().catch(() => {})
    emit({ event: 'exited' })
    process.exit(0)
  }
}

export function main(args) {
  if (args.length !== 3) {
    process.stderr.write('consumers BOOTSTRAP TOPIC PARTITION\n')
    process.exit(2)
  }
  const consumers = new Consumers(args[0], args[1], Number(args[2]))
  let exiting = false
  const exit = () => {
    if (!exiting) {
      exiting = true
      consumers.exit()
    }
  }
  readLines(line => {
    if (line === 'exit') exit()
    else if (line && !exiting) consumers.handle(line)
  }, exit)
  emit({ event: 'ready', client: CLIENT })
}
