// What every kcts KafkaJS driver shares: JSON-line events on stdout, the client's version, and a
// Kafka instance per client id (the protocol proxy tells the scenes' consumers apart by it).
'use strict'

const { isMainThread, parentPort } = require('worker_threads')
const { Kafka, logLevel } = require('kafkajs')
const { version } = require('kafkajs/package.json')

const CLIENT = `kafkajs ${version}`

// A driver whose clients run in a worker thread (consumers.js) hands its output to the main thread,
// which writes it: one ordered channel, and the main thread stays free to exit on time.
function write(stream, text) {
  if (isMainThread) process[stream].write(text)
  else parentPort.postMessage({ stream, text })
}

function emit(event) {
  write('stdout', JSON.stringify(event) + '\n')
}

// KafkaJS's own account (retries, resets, rebalances) goes to stderr, the driver's log: the evidence
// when a scene's client stalls. `onEntry` sees each entry too (the consumers driver reports resets).
function logCreator(onEntry) {
  return () => ({ namespace, level, log }) => {
    const { message, ...extra } = log
    // Not a JSON line: the harness reads JSON lines of either stream as the driver's events.
    write('stderr', `kafkajs ${logLevel[level] ?? level} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
    if (onEntry) onEntry(namespace, level, message, extra)
  }
}

function kafka(bootstrap, clientId, { onEntry, ...settings } = {}) {
  return new Kafka({
    brokers: bootstrap.split(','),
    clientId,
    logLevel: logLevel.INFO,
    logCreator: logCreator(onEntry),
    ...settings,
  })
}

// Commands arrive one per line on stdin; `handle(line)` returns a promise. `onEnd` runs at EOF.
function readLines(handle, onEnd) {
  const readline = require('readline')
  const rl = readline.createInterface({ input: process.stdin, terminal: false })
  rl.on('line', line => handle(line.trim()))
  rl.on('close', onEnd)
}

module.exports = { CLIENT, emit, kafka, readLines, version }
