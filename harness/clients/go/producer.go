package main

// producer: an idempotent kgo producer (acks all) writing a steady stream, the franz-go side of the
// KIP-359 failover check.
//
//	kcts-clients -tag=MARKER producer BOOTSTRAP TOPIC PREFIX
//
// It sends "<PREFIX>.<n>" to partition 0 of TOPIC, about 200 a second, until its input says exit;
// then it flushes. Events, in VerifiableProducer's words: ready, producer_send_success {value,
// offset}, producer_send_error {value, exception, message}, stopped {sent, unreported}.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func runProducer(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "producer BOOTSTRAP TOPIC PREFIX")
		return 2
	}
	bootstrap, topic, prefix := args[0], args[1], args[2]
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ClientID("kcts-franz-go-producer"),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond),
		// A paused leader answers nothing: give up on a request after 10 s, not the default, and retry.
		kgo.ProduceRequestTimeout(10*time.Second), kgo.RequestTimeoutOverhead(10*time.Second),
		kgo.MaxBufferedRecords(200), // keeps the in-flight window small and steady
		// A Produce that timed out on a frozen leader is retried on the same broker without a metadata
		// update (kgo's isRetryableBrokerErr); only the metadata age moves the partition to the new
		// leader, and its 5 min default outlasts the check. The consumer driver refreshes as often.
		kgo.MetadataMinAge(250*time.Millisecond), kgo.MetadataMaxAge(time.Second),
		// kcts reads the written log itself; its codec needs no snappy when batches are uncompressed,
		// as the Java and librdkafka producers send them.
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		// kgo's own account of retries and metadata, on stderr: the evidence when the stream stalls.
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cl.Close()
	var stop atomic.Bool
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if strings.TrimSpace(in.Text()) == "exit" {
				break
			}
		}
		stop.Store(true)
	}()
	emit(map[string]any{"event": "ready", "client": "franz-go " + moduleVersion()})
	var unreported atomic.Int64
	n := 0
	for !stop.Load() {
		value := fmt.Sprintf("%s.%d", prefix, n)
		unreported.Add(1)
		// Produce blocks while MaxBufferedRecords are in flight: the stream waits on a failover.
		cl.Produce(context.Background(), &kgo.Record{Partition: 0, Value: []byte(value)}, func(r *kgo.Record, err error) {
			unreported.Add(-1)
			if err != nil {
				emit(map[string]any{"event": "producer_send_error", "value": value, "exception": fmt.Sprintf("%T", err),
					"message": err.Error()})
				return
			}
			emit(map[string]any{"event": "producer_send_success", "value": value, "offset": r.Offset})
		})
		n++
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl.Flush(ctx)
	emit(map[string]any{"event": "stopped", "sent": n, "unreported": unreported.Load()})
	return 0
}
