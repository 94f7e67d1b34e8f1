package main

// copier: a consume-transform-produce loop as a group member, the sarama twin of harness/clients/go/
// copier.go: a ConsumerGroup (read_committed) hands records to a transactional SyncProducer; each
// transaction copies what the polls returned (up to TRANSACTION_SIZE records, polling for at most
// 2 s) to partition 0 of SINK, adds the consumed offsets with AddMessageToTxnWithGroupMetadata (the
// session's generation and member, KIP-447; TxnOffsetCommit) and commits. SOURCE may name several
// topics, comma separated. A transaction that fails is aborted and its records copied again in the
// next one (sarama does not move the consumer back: the driver keeps them, as an application would).
//
//	kcts-sarama -tag=MARKER copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS
//
// Events: transaction_committed {records, copied} | transaction_aborted {records, error},
// poll_error {code, message}, done {outcome: copied | timed_out | failed, copied}.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// consumed is one record the group handed over, with the session it came in (its generation).
type consumed struct {
	session sarama.ConsumerGroupSession
	msg     *sarama.ConsumerMessage
}

// feeder hands every claim's records to the copy loop, in order per partition.
type feeder struct{ records chan consumed }

func (feeder) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (feeder) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (f feeder) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return nil
			}
			select {
			case f.records <- consumed{s, m}:
			case <-s.Context().Done():
				return nil
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func runCopier(args []string) int {
	if len(args) != 8 {
		fmt.Fprintln(os.Stderr, "copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS")
		return 2
	}
	bootstrap, source, sink, group, txnID := args[0], args[1], args[2], args[3], args[4]
	wanted, err1 := strconv.Atoi(args[5])
	size, err2 := strconv.Atoi(args[6])
	timeoutMs, err3 := strconv.Atoi(args[7])
	if err1 != nil || err2 != nil || err3 != nil {
		fmt.Fprintln(os.Stderr, "MESSAGES, TRANSACTION_SIZE and TIMEOUT_MS are numbers")
		return 2
	}
	failed := func(err error) int {
		emit(map[string]any{"event": "done", "outcome": "failed", "copied": 0, "message": err.Error()})
		return 1
	}
	pcfg := baseConfig("kcts-sarama-copier")
	pcfg.Producer.Idempotent = true
	pcfg.Producer.Transaction.ID = txnID
	pcfg.Net.MaxOpenRequests = 1 // sarama's idempotent producer requires it
	pcfg.Producer.RequiredAcks = sarama.WaitForAll
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	pcfg.Producer.Return.Successes = true
	producer, err := sarama.NewSyncProducer(brokers(bootstrap), pcfg)
	if err != nil {
		return failed(err)
	}
	defer producer.Close()
	ccfg := baseConfig("kcts-sarama-copier")
	ccfg.Consumer.IsolationLevel = sarama.ReadCommitted
	ccfg.Consumer.Offsets.AutoCommit.Enable = false // the offsets go in the transactions
	ccfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	ccfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup(brokers(bootstrap), group, ccfg)
	if err != nil {
		return failed(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); cg.Close() }()
	f := feeder{records: make(chan consumed)}
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, strings.Split(source, ","), f); err != nil && ctx.Err() == nil {
				emit(map[string]any{"event": "poll_error", "code": describeError(err)["code"], "message": err.Error()})
				select { // sarama's own backoff before it joins again
				case <-ctx.Done():
				case <-time.After(ccfg.Consumer.Group.Rebalance.Retry.Backoff):
				}
			}
		}
	}()
	go func() {
		for err := range cg.Errors() {
			emit(map[string]any{"event": "poll_error", "code": describeError(err)["code"], "message": err.Error()})
		}
	}()
	deadline := time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	copied, outcome := 0, "copied"
	var held []consumed // the records of an aborted transaction, copied again in the next
	for copied < wanted {
		if time.Now().After(deadline) {
			outcome = "timed_out"
			break
		}
		batch := held
		poll := time.After(2 * time.Second)
	polling:
		for len(batch) < size && copied+len(batch) < wanted {
			select {
			case r := <-f.records:
				batch = append(batch, r)
			case <-poll:
				break polling
			}
		}
		if len(batch) == 0 {
			continue
		}
		if err := copyBatch(producer, sink, group, batch); err != nil {
			emit(map[string]any{"event": "transaction_aborted", "records": len(batch), "error": err.Error()})
			held = batch
			if producer.TxnStatus()&sarama.ProducerTxnFlagFatalError != 0 {
				emit(map[string]any{"event": "done", "outcome": "failed", "copied": copied, "message": err.Error()})
				return 1
			}
			continue
		}
		held = nil
		copied += len(batch)
		emit(map[string]any{"event": "transaction_committed", "records": len(batch), "copied": copied})
	}
	emit(map[string]any{"event": "done", "outcome": outcome, "copied": copied})
	if outcome != "copied" {
		return 1
	}
	return 0
}

// copyBatch is one transaction: the batch written to SINK-0, the offset after each partition's last
// record added through the group's coordinator, then committed; aborted on any error.
func copyBatch(producer sarama.SyncProducer, sink, group string, batch []consumed) error {
	if err := producer.BeginTxn(); err != nil {
		return err
	}
	out := make([]*sarama.ProducerMessage, 0, len(batch))
	last := map[string]consumed{}
	for _, r := range batch {
		out = append(out, &sarama.ProducerMessage{Topic: sink, Partition: 0, Key: bytes(r.msg.Key), Value: bytes(r.msg.Value)})
		last[fmt.Sprintf("%s-%d", r.msg.Topic, r.msg.Partition)] = r
	}
	err := producer.SendMessages(out)
	for _, r := range last {
		if err != nil {
			break
		}
		err = producer.AddMessageToTxnWithGroupMetadata(r.msg,
			sarama.NewConsumerGroupMetadataFromSession(r.session, group, nil), nil)
	}
	if err == nil {
		err = producer.CommitTxn()
	}
	if err != nil {
		if abortErr := producer.AbortTxn(); abortErr != nil {
			return errors.Join(err, abortErr)
		}
	}
	return err
}

// bytes keeps a nil key nil (ByteEncoder of nil would be an empty key).
func bytes(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}
