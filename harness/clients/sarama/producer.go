package main

// producer: an idempotent sarama AsyncProducer (acks all) writing a steady stream, the sarama side of
// the KIP-359 failover check.
//
//	kcts-sarama -tag=MARKER producer BOOTSTRAP TOPIC PREFIX
//
// It sends "<PREFIX>.<n>" to partition 0 of TOPIC, about 200 a second, until its input says exit;
// then it flushes. Events, in VerifiableProducer's words: ready, producer_send_success {value,
// offset}, producer_send_error {value, exception, message}, stopped {sent, unreported, reported_twice}.

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
)

func runProducer(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "producer BOOTSTRAP TOPIC PREFIX")
		return 2
	}
	bootstrap, topic, prefix := args[0], args[1], args[2]
	cfg := baseConfig("kcts-sarama-producer")
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1 // sarama's idempotent producer requires it (config.go Validate)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond // the others' linger
	// A paused leader answers nothing: give up on a request after 10 s, not the default, and
	// retry on the new leader. sarama's default, 3 retries 100 ms apart, would give up within a leader
	// election; these retries span about the Java producer's 120 s delivery timeout.
	cfg.Net.ReadTimeout = 10 * time.Second
	cfg.Producer.Timeout = 10 * time.Second
	cfg.Producer.Retry.Max = 100
	cfg.Producer.Retry.Backoff = time.Second
	cfg.ChannelBufferSize = 200 // keeps the in-flight window small and steady
	producer, err := sarama.NewAsyncProducer(brokers(bootstrap), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
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
	var unreported atomic.Int64
	// A value reported twice (success or error) is sarama's, kept for the stopped event: the count of
	// unreported records would hide it behind a record never reported.
	var reportedMu sync.Mutex
	reported, twice := map[any]bool{}, []any{}
	report := func(value any) {
		unreported.Add(-1)
		reportedMu.Lock()
		defer reportedMu.Unlock()
		if reported[value] {
			logLine(fmt.Sprintf("kcts: %v reported a second time", value)) // beside sarama's own log lines
			if len(twice) < 10 {
				twice = append(twice, value)
			}
		}
		reported[value] = true
	}
	var reporters sync.WaitGroup
	reporters.Add(2)
	go func() {
		defer reporters.Done()
		for m := range producer.Successes() {
			report(m.Metadata)
			emit(map[string]any{"event": "producer_send_success", "value": m.Metadata, "offset": m.Offset})
		}
	}()
	go func() {
		defer reporters.Done()
		for e := range producer.Errors() {
			report(e.Msg.Metadata)
			emit(map[string]any{"event": "producer_send_error", "value": e.Msg.Metadata, "exception": fmt.Sprintf("%T", e.Err),
				"message": e.Err.Error()})
		}
	}()
	emit(map[string]any{"event": "ready", "client": clientName()})
	n := 0
	for !stop.Load() {
		value := fmt.Sprintf("%s.%d", prefix, n)
		unreported.Add(1)
		// Input blocks while ChannelBufferSize records wait: the stream waits on a failover.
		producer.Input() <- &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(value),
			Metadata: value}
		n++
		time.Sleep(5 * time.Millisecond)
	}
	// AsyncClose flushes what is buffered, then closes Successes and Errors; past 60 s the rest is unreported.
	producer.AsyncClose()
	flushed := make(chan struct{})
	go func() { reporters.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(60 * time.Second):
	}
	reportedMu.Lock()
	defer reportedMu.Unlock()
	emit(map[string]any{"event": "stopped", "sent": n, "unreported": unreported.Load(), "reported_twice": twice})
	return 0
}
