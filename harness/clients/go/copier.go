package main

// copier: a consume-transform-produce loop as a group member (kgo's GroupTransactSession), the
// franz-go twin of harness/clients/java/Kip1319Copier.java: each transaction copies what its polls
// returned (up to TRANSACTION_SIZE records, polling for at most 2 s) to partition 0 of SINK, and
// End commits the consumed offsets with TxnOffsetCommit. SOURCE may name several topics, comma
// separated.
//
//	kcts-clients -tag=MARKER copier BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS
//
// Events: transaction_committed {records, copied} | transaction_aborted {records, error},
// poll_error {code, message}, done {outcome: copied | timed_out | failed, copied}.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
	s, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ClientID("kcts-franz-go-copier"),
		kgo.TransactionalID(txnID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(strings.Split(source, ",")...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		emit(map[string]any{"event": "done", "outcome": "failed", "copied": 0, "message": err.Error()})
		return 1
	}
	defer s.Close()
	deadline := time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	copied, outcome := 0, "copied"
	for copied < wanted {
		if time.Now().After(deadline) {
			outcome = "timed_out"
			break
		}
		if err := s.Begin(); err != nil {
			emit(map[string]any{"event": "done", "outcome": "failed", "copied": copied, "message": err.Error()})
			return 1
		}
		// The records already written reach the copier in several fetches (a partition per broker):
		// it polls until the transaction is full, so that one transaction spans every input topic.
		var out []*kgo.Record
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		for len(out) < size && ctx.Err() == nil && copied+len(out) < wanted {
			fetches := s.PollRecords(ctx, size-len(out))
			fetches.EachError(func(_ string, _ int32, err error) {
				if err != context.DeadlineExceeded && err != context.Canceled {
					emit(map[string]any{"event": "poll_error", "code": fmt.Sprintf("%T", err), "message": err.Error()})
				}
			})
			fetches.EachRecord(func(r *kgo.Record) {
				out = append(out, &kgo.Record{Topic: sink, Partition: 0, Key: r.Key, Value: r.Value})
			})
		}
		cancel()
		var produceErr error
		if len(out) > 0 {
			produceErr = s.ProduceSync(context.Background(), out...).FirstErr()
		}
		end := kgo.TryCommit
		if produceErr != nil {
			end = kgo.TryAbort
		}
		endCtx, endCancel := context.WithTimeout(context.Background(), 30*time.Second)
		committed, err := s.End(endCtx, end)
		endCancel()
		switch {
		case err != nil || produceErr != nil || !committed:
			message := fmt.Sprint(err, produceErr)
			emit(map[string]any{"event": "transaction_aborted", "records": len(out), "error": message})
		case len(out) > 0:
			copied += len(out)
			emit(map[string]any{"event": "transaction_committed", "records": len(out), "copied": copied})
		}
	}
	emit(map[string]any{"event": "done", "outcome": outcome, "copied": copied})
	if outcome != "copied" {
		return 1
	}
	return 0
}
