// What every kcts @platformatic/kafka driver shares: JSON-line events on stdout, the client's
// version, the commands read from stdin.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import readline from 'node:readline'

// The package's exports hide its package.json: read the one beside its entry point.
const entry = createRequire(import.meta.url).resolve('@platformatic/kafka')
export const version = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version
export const CLIENT = `@platformatic/kafka ${version}`

export function emit(event) {
  process.stdout.write(JSON.stringify(event, (_, v) => (typeof v === 'bigint' ? Number(v) : v)) + '\n')
}

export function brokers(bootstrap) {
  return bootstrap.split(',')
}

// Commands arrive one per line on stdin; `onEnd` runs at EOF.
export function readLines(handle, onEnd) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false })
  rl.on('line', line => handle(line.trim()))
  rl.on('close', onEnd)
}

// The client wraps a retried request's errors in MultipleErrors (one per attempt), each protocol
// error in a ResponseError: the message names every Kafka error code in the chain, so a report says
// which answers ended the request, not only "fetch failed 2 times".
function protocolCodes(error, seen = new Set()) {
  if (!error || typeof error !== 'object' || seen.has(error)) return []
  seen.add(error)
  const own = error.apiId ? [error.apiId] : []
  return [...own, ...(error.errors ?? []).flatMap(e => protocolCodes(e, seen)), ...protocolCodes(error.cause, seen)]
}

export function describe(error) {
  const cause = error.cause ?? error.errors?.[0]
  const codes = protocolCodes(error)
  const message = cause && cause !== error ? `${error.message}: ${cause.message ?? cause}` : error.message
  return { code: error.apiId ?? error.code ?? error.name ?? 'Error',
    message: codes.length ? `${message} [${codes.join(', ')}]` : message }
}
