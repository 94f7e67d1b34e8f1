// franz-go (kgo) drivers for the client checks: the same commands and JSON events as the Java and
// librdkafka drivers, so one scenario drives every client stack alike.
//
//	kcts-clients -tag=MARKER consumers BOOTSTRAP TOPIC PARTITION
//
// consumers: the KIP-320 truncation consumers. Commands, one per line (RESET: earliest, latest, none):
//
//	assign NAME RESET OFFSET           a consumer without a group, at OFFSET of the partition
//	seekepoch NAME RESET OFFSET EPOCH  the same, at NewOffset().At(OFFSET).WithEpoch(EPOCH): a
//	                                   position restored from outside, validated before fetching
//	subscribe NAME RESET GROUP [ISOLATION]
//	                                   a member of GROUP, from the group's committed offset and epoch
//	                                   (ISOLATION: read_uncommitted, the default, or read_committed)
//	position NAME                      answers "position" with the offset it would commit: kgo has
//	                                   no position(); UncommittedOffsets is the head of what it consumed
//	commit NAME                        commits what was consumed; answers with what OffsetFetch reads back
//	pause NAME / resume NAME           stop and restart fetching its partition (the position stays)
//	until NAME OFFSET                  the consumer stops polling once it delivered the record at OFFSET
//	                                   (given before or after it starts; it polls one record at a time
//	                                   meanwhile); answers "held" then
//	offsetsfortimes NAME TIMESTAMP     a client of its own looks TIMESTAMP up and answers offset_for_time:
//	                                   kgo has no offsetsForTimes; kadm's ListOffsetsAfterMilli is this
//	                                   ListOffsets request, issued through the kgo client (sent to the leader)
//	close NAME
//	exit
//
// Events: ready, record {consumer, offset, epoch, value}, error {consumer, code, message,
// divergent}, committed {consumer, offset, epoch}, position {consumer, offset, of}, held {consumer,
// offset}, offset_for_time {consumer, timestamp, offset, epoch, found_timestamp, error}, closed,
// done, command_failed, exited. kgo keeps consuming after an error it reports
// (ErrDataLoss is "informational"), so later records are reported too: the checks see whether it
// read on.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

type consumers struct {
	bootstrap string
	topic     string
	partition int32
	polling   map[string]*kgo.Client
	groups    map[string]string // the group of each subscribed consumer
	until     map[string]int64  // a consumer's last record before it holds
	held      map[string]bool
	order     []string
}

func resetOffset(reset string) (kgo.Offset, error) {
	switch reset {
	case "earliest":
		return kgo.NewOffset().AtStart(), nil
	case "latest":
		return kgo.NewOffset().AtEnd(), nil
	case "none":
		return kgo.NoResetOffset(), nil
	}
	return kgo.Offset{}, fmt.Errorf("unknown reset %q (earliest, latest, none)", reset)
}

func (c *consumers) client(name, reset string, extra ...kgo.Opt) (*kgo.Client, error) {
	r, err := resetOffset(reset)
	if err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(strings.Split(c.bootstrap, ",")...), kgo.ClientID(name), kgo.ConsumeResetOffset(r),
		// Leader changes are noticed through metadata; the default age (5 min) would hide them.
		kgo.MetadataMinAge(250 * time.Millisecond), kgo.MetadataMaxAge(time.Second),
	}, extra...)
	return kgo.NewClient(opts...)
}

func (c *consumers) add(name string, cl *kgo.Client) {
	c.polling[name] = cl
	c.order = append(c.order, name)
}

func (c *consumers) at(offset kgo.Offset) kgo.Opt {
	return kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.topic: {c.partition: offset}})
}

func (c *consumers) run(cmd []string) error {
	if len(cmd) < 2 {
		return fmt.Errorf("command %q: too few words", strings.Join(cmd, " "))
	}
	name := cmd[1]
	switch cmd[0] {
	case "assign", "seekepoch":
		offset, err := strconv.ParseInt(cmd[3], 10, 64)
		if err != nil {
			return err
		}
		at := kgo.NewOffset().At(offset)
		if cmd[0] == "seekepoch" {
			epoch, err := strconv.ParseInt(cmd[4], 10, 32)
			if err != nil {
				return err
			}
			at = at.WithEpoch(int32(epoch))
		}
		cl, err := c.client(name, cmd[2], c.at(at))
		if err != nil {
			return err
		}
		c.add(name, cl)
	case "subscribe":
		opts := []kgo.Opt{kgo.ConsumerGroup(cmd[3]), kgo.ConsumeTopics(c.topic), kgo.DisableAutoCommit()}
		if len(cmd) > 4 {
			switch cmd[4] {
			case "read_committed":
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			case "read_uncommitted":
			default:
				return fmt.Errorf("unknown isolation %q (read_uncommitted, read_committed)", cmd[4])
			}
		}
		cl, err := c.client(name, cmd[2], opts...)
		if err != nil {
			return err
		}
		c.add(name, cl)
		c.groups[name] = cmd[3]
	case "commit":
		cl := c.polling[name]
		if cl == nil {
			return fmt.Errorf("no consumer %s", name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		uncommitted := cl.UncommittedOffsets()
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return err
		}
		offset, epoch, err := c.committed(ctx, cl, c.groups[name])
		if err != nil {
			return err
		}
		emit(map[string]any{"event": "committed", "consumer": name, "offset": offset, "epoch": epoch,
			"sent": fmt.Sprint(uncommitted)})
	case "position":
		cl := c.polling[name]
		if cl == nil {
			return fmt.Errorf("no consumer %s", name)
		}
		head, ok := cl.UncommittedOffsets()[c.topic][c.partition]
		if !ok {
			return fmt.Errorf("%s has consumed nothing of partition %d", name, c.partition)
		}
		emit(map[string]any{"event": "position", "consumer": name, "offset": head.Offset, "epoch": head.Epoch,
			"of": "UncommittedOffsets()"})
	case "offsetsfortimes":
		timestamp, err := strconv.ParseInt(cmd[2], 10, 64)
		if err != nil {
			return err
		}
		return c.offsetForTime(name, timestamp)
	case "until":
		offset, err := strconv.ParseInt(cmd[2], 10, 64)
		if err != nil {
			return err
		}
		c.until[name] = offset
		delete(c.held, name)
	case "pause", "resume":
		cl := c.polling[name]
		if cl == nil {
			return fmt.Errorf("no consumer %s", name)
		}
		partitions := map[string][]int32{c.topic: {c.partition}}
		if cmd[0] == "pause" {
			cl.PauseFetchPartitions(partitions)
		} else {
			cl.ResumeFetchPartitions(partitions)
		}
	case "close":
		if cl := c.polling[name]; cl != nil {
			cl.Close()
			delete(c.polling, name)
		}
		emit(map[string]any{"event": "closed", "consumer": name})
	default:
		return fmt.Errorf("unknown command %s", cmd[0])
	}
	return nil
}

// committed reads the group's commit back from the coordinator (OffsetFetch), as Java's committed()
// does. kgo sends the request to the group's coordinator, and turns the v8+ Groups form into the
// top-level one for a broker older than v8.
func (c *consumers) committed(ctx context.Context, cl *kgo.Client, group string) (int64, int32, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.RequireStable = true
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	id, err := c.topicID(ctx, cl)
	if err != nil {
		return 0, 0, err
	}
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic = c.topic
	setOffsetFetchTopicID(&gt, id) // v10+ names the topic by its ID
	gt.Partitions = []int32{c.partition}
	g.Topics = append(g.Topics, gt)
	req.Groups = append(req.Groups, g)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, 0, err
	}
	for _, rg := range resp.Groups {
		if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
			return 0, 0, err
		}
		for _, rt := range rg.Topics {
			for _, p := range rt.Partitions {
				if (rt.Topic == c.topic || offsetFetchTopicID(&rt) == id) && p.Partition == c.partition {
					return p.Offset, p.LeaderEpoch, kerr.ErrorForCode(p.ErrorCode)
				}
			}
		}
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, 0, err
	}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if rt.Topic == c.topic && p.Partition == c.partition {
				return p.Offset, p.LeaderEpoch, kerr.ErrorForCode(p.ErrorCode)
			}
		}
	}
	return 0, 0, fmt.Errorf("OffsetFetch answered no partition %d", c.partition)
}

// offsetForTime answers offset_for_time with the partition's ListOffsets answer for timestamp, as
// kadm.ListOffsetsAfterMilli asks it (CurrentLeaderEpoch -1), through a kgo client of its own.
func (c *consumers) offsetForTime(name string, timestamp int64) error {
	cl, err := c.client(name, "none")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = c.topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.Timestamp, p.CurrentLeaderEpoch = c.partition, timestamp, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic != c.topic || rp.Partition != c.partition {
				continue
			}
			event := map[string]any{"event": "offset_for_time", "consumer": name, "timestamp": timestamp,
				"offset": rp.Offset, "epoch": rp.LeaderEpoch, "found_timestamp": rp.Timestamp, "error": nil}
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				event["error"] = err.Error()
			}
			emit(event)
			return nil
		}
	}
	return fmt.Errorf("ListOffsets answered no partition %d", c.partition)
}

func (c *consumers) topicID(ctx context.Context, cl *kgo.Client) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(c.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, err
	}
	for _, rt := range resp.Topics {
		if rt.Topic != nil && *rt.Topic == c.topic {
			return rt.TopicID, kerr.ErrorForCode(rt.ErrorCode)
		}
	}
	return [16]byte{}, fmt.Errorf("metadata has no topic %s", c.topic)
}

func describeError(err error) map[string]any {
	event := map[string]any{"code": fmt.Sprintf("%T", err), "message": err.Error()}
	var loss *kgo.ErrDataLoss
	if errors.As(err, &loss) {
		event["code"] = "ErrDataLoss"
		resetToEpoch, consumedToEpoch := lossEpochs(loss)
		event["divergent"] = []map[string]any{{"partition": loss.Partition, "offset": loss.ResetTo,
			"epoch": resetToEpoch, "consumed_to": loss.ConsumedTo, "consumed_to_epoch": consumedToEpoch}}
	} else if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
		event["code"] = ke.Message
	}
	return event
}

func (c *consumers) poll(name string) {
	if c.held[name] {
		return
	}
	cl := c.polling[name]
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	limit := 0 // PollRecords: everything buffered
	if _, ok := c.until[name]; ok {
		limit = 1 // one at a time, so that it holds exactly after the record asked for
	}
	fetches := cl.PollRecords(ctx, limit)
	fetches.EachError(func(topic string, partition int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		event := describeError(err)
		event["event"], event["consumer"] = "error", name
		emit(event)
	})
	fetches.EachRecord(func(r *kgo.Record) {
		emit(map[string]any{"event": "record", "consumer": name, "offset": r.Offset, "epoch": r.LeaderEpoch,
			"value": string(r.Value)})
		if last, ok := c.until[name]; ok && r.Offset >= last {
			c.held[name] = true
			emit(map[string]any{"event": "held", "consumer": name, "offset": r.Offset})
		}
	})
}

func (c *consumers) closeAll() {
	for _, cl := range c.polling {
		cl.Close()
	}
}

func runConsumers(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "consumers BOOTSTRAP TOPIC PARTITION")
		return 2
	}
	partition, err := strconv.ParseInt(args[2], 10, 32)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c := &consumers{bootstrap: args[0], topic: args[1], partition: int32(partition), polling: map[string]*kgo.Client{},
		groups: map[string]string{}, until: map[string]int64{}, held: map[string]bool{}}
	commands := make(chan string, 64)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			commands <- strings.TrimSpace(in.Text())
		}
		commands <- "exit"
	}()
	emit(map[string]any{"event": "ready", "client": "franz-go " + moduleVersion()})
	for {
		for drained := false; !drained; {
			select {
			case line := <-commands:
				if c.handle(line) {
					return 0
				}
			default:
				drained = true
			}
		}
		if len(c.polling) == 0 {
			select { // idle until the next command: nothing to poll
			case line := <-commands:
				if c.handle(line) {
					return 0
				}
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		for _, name := range c.order {
			if _, ok := c.polling[name]; ok {
				c.poll(name)
			}
		}
	}
}

// handle runs one command line; true when it was exit.
func (c *consumers) handle(line string) bool {
	switch {
	case line == "exit":
		c.closeAll()
		emit(map[string]any{"event": "exited"})
		return true
	case line == "":
	default:
		if err := c.run(strings.Fields(line)); err != nil {
			emit(map[string]any{"event": "command_failed", "command": line, "exception": fmt.Sprintf("%T", err),
				"message": err.Error()})
		} else {
			emit(map[string]any{"event": "done", "command": line})
		}
	}
	return false
}

func main() {
	flag.String("tag", "", "the session marker (the harness's reaper finds the process by it)")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: kcts-clients -tag=MARKER consumers|copier|producer ARGS (see main.go, copier.go, producer.go)")
		os.Exit(2)
	}
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
