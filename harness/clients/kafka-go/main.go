// kafka-go (github.com/segmentio/kafka-go) drivers for the client checks: the same commands and JSON
// events as the Java, librdkafka and franz-go drivers (harness/clients/go/main.go is the model), so
// one scene drives every client stack alike. kafka-go has a consumer (Reader) but no idempotent or
// transactional producer, so this binary has the consumers role only (harness/clients/stacks/
// kafka_go.py says why the others are lacking).
//
//	kcts-kafka-go -tag=MARKER consumers BOOTSTRAP TOPIC PARTITION   (consumers.go)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/segmentio/kafka-go"
)

var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func emit(event map[string]any) {
	b, _ := json.Marshal(event)
	out.Lock()
	defer out.Unlock()
	out.w.Write(b)
	out.w.WriteByte('\n')
	out.w.Flush()
}

// moduleVersion is the kafka-go version this binary was built with, from its build information.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/segmentio/kafka-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// describeError is an error event's code and message: the Kafka error's name where kafka-go hands one
// over (its Title, "Offset Out Of Range", in the protocol's spelling OFFSET_OUT_OF_RANGE).
func describeError(err error) map[string]any {
	event := map[string]any{"code": fmt.Sprintf("%T", err), "message": err.Error()}
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		event["code"] = strings.ToUpper(strings.ReplaceAll(kerr.Title(), " ", "_"))
	}
	return event
}

// stderrLogger writes kafka-go's error log lines to stderr, which the harness reads from the same pipe
// as the events: one whole line at a time, under the events' lock, so no event is glued to a log line.
type stderrLogger struct{}

func (stderrLogger) Printf(format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	out.Lock()
	defer out.Unlock()
	os.Stderr.WriteString(line)
}

func main() {
	flag.String("tag", "", "the session marker (the harness's reaper finds the process by it)")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: kcts-kafka-go -tag=MARKER consumers ARGS (see consumers.go)")
		os.Exit(2)
	}
	switch args[0] {
	case "consumers":
		os.Exit(runConsumers(args[1:]))
	case "version":
		fmt.Println(moduleVersion())
	default:
		fmt.Fprintf(os.Stderr, "unknown driver %s (kafka-go's drivers: consumers)\n", args[0])
		os.Exit(2)
	}
}
