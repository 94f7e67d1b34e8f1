// sarama (github.com/IBM/sarama) drivers for the client checks: the same commands and JSON events as
// the Java, librdkafka and franz-go drivers (harness/clients/go/main.go is the model), so one scene
// drives every client stack alike.
//
//	kcts-sarama -tag=MARKER consumers BOOTSTRAP TOPIC PARTITION   (consumers.go)
//	kcts-sarama -tag=MARKER producer BOOTSTRAP TOPIC PREFIX       (producer.go)
//	kcts-sarama -tag=MARKER copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS
//	                                                              (copier.go)
//
// Every client is configured with Version = sarama.MaxVersion: sarama picks each request's version
// from Config.Version (its default, 2.8.0, predates the brokers judged) and then clamps it to the
// broker's ApiVersions ranges (api_versions.go restrictApiVersion), so the newest version both sides
// speak is sent, as the other clients do.
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
	"time"

	"github.com/IBM/sarama"
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

// moduleVersion is the sarama version this binary was built with, from its build information.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/IBM/sarama" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func clientName() string { return "sarama " + moduleVersion() }

// baseConfig is what every driver's client shares: the newest protocol versions, and metadata
// refreshed every second (leader changes are noticed through it; the default, 10 min, would hide them).
func baseConfig(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ClientID = clientID
	cfg.Metadata.RefreshFrequency = time.Second
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	return cfg
}

func brokers(bootstrap string) []string { return strings.Split(bootstrap, ",") }

// kafkaNames are the protocol's names of the error codes a consumer or copier here may meet, as the
// other drivers report them (kafka-clients' Errors enum); another code is reported as KError(N).
var kafkaNames = map[sarama.KError]string{
	sarama.ErrOffsetOutOfRange: "OFFSET_OUT_OF_RANGE", sarama.ErrUnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION",
	sarama.ErrNotLeaderForPartition: "NOT_LEADER_OR_FOLLOWER", sarama.ErrLeaderNotAvailable: "LEADER_NOT_AVAILABLE",
	sarama.ErrRequestTimedOut: "REQUEST_TIMED_OUT", sarama.ErrOffsetsLoadInProgress: "COORDINATOR_LOAD_IN_PROGRESS",
	sarama.ErrConsumerCoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE", sarama.ErrNotCoordinatorForConsumer: "NOT_COORDINATOR",
	sarama.ErrIllegalGeneration: "ILLEGAL_GENERATION", sarama.ErrUnknownMemberId: "UNKNOWN_MEMBER_ID",
	sarama.ErrRebalanceInProgress: "REBALANCE_IN_PROGRESS", sarama.ErrFencedLeaderEpoch: "FENCED_LEADER_EPOCH",
	sarama.ErrUnknownLeaderEpoch: "UNKNOWN_LEADER_EPOCH", sarama.ErrGroupIDNotFound: "GROUP_ID_NOT_FOUND",
	sarama.KError(100): "UNKNOWN_TOPIC_ID", sarama.KError(110): "STALE_MEMBER_EPOCH", // sarama names neither
	sarama.ErrInvalidProducerEpoch: "INVALID_PRODUCER_EPOCH", sarama.ErrProducerFenced: "PRODUCER_FENCED",
	sarama.ErrConcurrentTransactions: "CONCURRENT_TRANSACTIONS", sarama.ErrOutOfOrderSequenceNumber: "OUT_OF_ORDER_SEQUENCE_NUMBER",
	sarama.ErrDuplicateSequenceNumber: "DUPLICATE_SEQUENCE_NUMBER", sarama.ErrUnknownProducerID: "UNKNOWN_PRODUCER_ID",
	sarama.ErrOffsetNotAvailable: "OFFSET_NOT_AVAILABLE", sarama.ErrNotEnoughReplicas: "NOT_ENOUGH_REPLICAS",
	sarama.ErrUnstableOffsetCommit: "UNSTABLE_OFFSET_COMMIT",
}

// describeError is an error event's code and message: the Kafka error's name where sarama hands one over.
func describeError(err error) map[string]any {
	event := map[string]any{"code": fmt.Sprintf("%T", err), "message": err.Error()}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		if name, ok := kafkaNames[kerr]; ok {
			event["code"] = name
		} else {
			event["code"] = fmt.Sprintf("KError(%d)", int16(kerr))
		}
	}
	return event
}

func main() {
	flag.String("tag", "", "the session marker (the harness's reaper finds the process by it)")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: kcts-sarama -tag=MARKER consumers|copier|producer ARGS (see consumers.go, copier.go, producer.go)")
		os.Exit(2)
	}
	// sarama's own account of retries, metadata and rebalances, on stderr (the driver's log).
	sarama.Logger = logger{}
	switch args[0] {
	case "consumers":
		os.Exit(runConsumers(args[1:]))
	case "producer":
		os.Exit(runProducer(args[1:]))
	case "copier":
		os.Exit(runCopier(args[1:]))
	case "version":
		fmt.Println(moduleVersion())
	default:
		fmt.Fprintf(os.Stderr, "unknown driver %s\n", args[0])
		os.Exit(2)
	}
}

// logger writes sarama's log lines to stderr, which the harness reads from the same pipe as the
// events: each line is ended (sarama leaves some Printf lines open) and written under the events'
// lock, so no event is glued to a log line and lost (a success report was, before).
type logger struct{}

func (logger) Print(v ...any)                 { logLine(fmt.Sprint(v...)) }
func (logger) Printf(format string, v ...any) { logLine(fmt.Sprintf(format, v...)) }
func (logger) Println(v ...any)               { logLine(fmt.Sprintln(v...)) }

func logLine(line string) {
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	out.Lock()
	defer out.Unlock()
	os.Stderr.WriteString(line)
}
