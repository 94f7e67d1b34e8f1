package main

// consumers: the KIP-320 truncation consumers (harness/clients/java/Kip320Consumers.java names the
// commands and events), on sarama's API.
//
//	kcts-sarama -tag=MARKER consumers BOOTSTRAP TOPIC PARTITION
//
//	assign NAME RESET OFFSET           Consumer.ConsumePartition(topic, partition, OFFSET): a consumer
//	                                   without a group. sarama has no reset policy for it: an offset out
//	                                   of range stops its partition consumer with ErrOffsetOutOfRange
//	                                   (consumer.go, brokerConsumer.handleResponses), whatever RESET says
//	seekepoch NAME RESET OFFSET EPOCH  command_failed, lacks: sarama has no seek with a leader epoch
//	subscribe NAME RESET GROUP [ISOLATION]
//	                                   a ConsumerGroup member: RESET earliest/latest is
//	                                   Consumer.Offsets.Initial (OffsetOldest/OffsetNewest), also used
//	                                   when the committed offset is out of range
//	                                   (Consumer.Group.ResetInvalidOffsets); none turns that reset off
//	position NAME                      sarama has no position(): the offset it would commit, the one
//	                                   after the last record handed over (MarkMessage marks offset+1)
//	commit NAME                        ConsumerGroupSession.Commit() of what was marked; answers with
//	                                   what OffsetFetch reads back (ClusterAdmin.ListConsumerGroupOffsets)
//	pause NAME / resume NAME           PartitionConsumer / ConsumerGroup Pause and Resume
//	until NAME OFFSET                  stop handing records over once the record at OFFSET was (then "held")
//	offsetsfortimes NAME TIMESTAMP     Client.GetOffset(topic, partition, TIMESTAMP), a client of its own:
//	                                   sarama returns the offset only (no leader epoch, no timestamp)
//	close NAME
//	exit
//
// Events: ready, record {consumer, offset, epoch: null (ConsumerMessage has no leader epoch), value},
// error {consumer, code, message}, committed {consumer, offset, epoch}, position {consumer, offset,
// epoch, of}, held, offset_for_time, closed, done, command_failed {command, exception, message,
// lacks}, exited.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// claimed is a claim of the group's partition, handed from the group's handler to the poll loop.
type claimed struct {
	session sarama.ConsumerGroupSession
	claim   sarama.ConsumerGroupClaim
}

// handler hands each claim to the poll loop, which reads its messages itself (one at a time where it
// holds at an offset), and keeps the claim until the session ends.
type handler struct{ claims chan claimed }

func (handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	select {
	case h.claims <- claimed{s, c}:
	case <-s.Context().Done():
		return nil
	}
	<-s.Context().Done()
	return nil
}

type consumer struct {
	name     string
	client   sarama.Client
	consumer sarama.Consumer          // assign
	pc       sarama.PartitionConsumer // assign
	pcErrors <-chan *sarama.ConsumerError
	group    sarama.ConsumerGroup // subscribe
	groupID  string
	claims   chan claimed
	current  *claimed
	cancel   context.CancelFunc
	consumed int64 // the offset after the last record handed over; -1: none yet
}

func (c *consumer) messages() <-chan *sarama.ConsumerMessage {
	if c.pc != nil {
		return c.pc.Messages()
	}
	if c.current != nil {
		return c.current.claim.Messages()
	}
	return nil
}

func (c *consumer) groupErrors() <-chan error {
	if c.group == nil {
		return nil
	}
	return c.group.Errors()
}

func (c *consumer) close() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.group != nil {
		c.group.Close() // leaves the group
	}
	if c.pc != nil {
		c.pc.Close()
	}
	if c.consumer != nil {
		c.consumer.Close()
	}
	c.client.Close()
}

type consumers struct {
	bootstrap string
	topic     string
	partition int32
	polling   map[string]*consumer
	until     map[string]int64
	held      map[string]bool
	order     []string
}

func (cs *consumers) config(name, reset, isolation string) (*sarama.Config, error) {
	cfg := baseConfig(name)
	cfg.Consumer.Return.Errors = true // by default sarama only logs them
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	switch reset {
	case "earliest":
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	case "latest":
		cfg.Consumer.Offsets.Initial = sarama.OffsetNewest
	case "none":
		cfg.Consumer.Group.ResetInvalidOffsets = false
	default:
		return nil, fmt.Errorf("unknown reset %q (earliest, latest, none)", reset)
	}
	switch isolation {
	case "", "read_uncommitted":
	case "read_committed":
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	default:
		return nil, fmt.Errorf("unknown isolation %q (read_uncommitted, read_committed)", isolation)
	}
	return cfg, nil
}

func (cs *consumers) add(c *consumer) {
	cs.polling[c.name] = c
	cs.order = append(cs.order, c.name)
}

func (cs *consumers) get(name string) (*consumer, error) {
	if c := cs.polling[name]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no consumer %s", name)
}

// lacking is a command sarama has no API for: its command_failed says so (`lacks`).
type lacking struct{ what string }

func (l lacking) Error() string { return l.what }

func (cs *consumers) run(cmd []string) error {
	if len(cmd) < 2 {
		return fmt.Errorf("command %q: too few words", strings.Join(cmd, " "))
	}
	name := cmd[1]
	switch cmd[0] {
	case "assign":
		if len(cmd) < 4 {
			return fmt.Errorf("assign NAME RESET OFFSET")
		}
		offset, err := strconv.ParseInt(cmd[3], 10, 64)
		if err != nil {
			return err
		}
		cfg, err := cs.config(name, cmd[2], "")
		if err != nil {
			return err
		}
		client, err := sarama.NewClient(brokers(cs.bootstrap), cfg)
		if err != nil {
			return err
		}
		c := &consumer{name: name, client: client, consumed: -1}
		if c.consumer, err = sarama.NewConsumerFromClient(client); err != nil {
			client.Close()
			return err
		}
		if c.pc, err = c.consumer.ConsumePartition(cs.topic, cs.partition, offset); err != nil {
			c.close()
			return err
		}
		c.pcErrors = c.pc.Errors()
		cs.add(c)
	case "seekepoch":
		return lacking{"sarama has no seek with a leader epoch: Consumer.ConsumePartition(topic string, partition " +
			"int32, offset int64) takes an offset only, and no sarama API takes a leader epoch for a position " +
			"(consumer.go, sarama " + moduleVersion() + ")"}
	case "subscribe":
		if len(cmd) < 4 {
			return fmt.Errorf("subscribe NAME RESET GROUP [ISOLATION]")
		}
		isolation := ""
		if len(cmd) > 4 {
			isolation = cmd[4]
		}
		cfg, err := cs.config(name, cmd[2], isolation)
		if err != nil {
			return err
		}
		client, err := sarama.NewClient(brokers(cs.bootstrap), cfg)
		if err != nil {
			return err
		}
		c := &consumer{name: name, client: client, groupID: cmd[3], claims: make(chan claimed, 1), consumed: -1}
		if c.group, err = sarama.NewConsumerGroupFromClient(cmd[3], client); err != nil {
			client.Close()
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		go cs.consume(ctx, c)
		cs.add(c)
	case "commit":
		c, err := cs.get(name)
		if err != nil {
			return err
		}
		if c.current == nil {
			return fmt.Errorf("%s holds no claim of partition %d to commit", name, cs.partition)
		}
		c.current.session.Commit()
		offset, epoch, err := cs.committed(c)
		if err != nil {
			return err
		}
		emit(map[string]any{"event": "committed", "consumer": name, "offset": offset, "epoch": epoch})
	case "position":
		c, err := cs.get(name)
		if err != nil {
			return err
		}
		if c.consumed < 0 {
			return fmt.Errorf("%s has consumed nothing of partition %d", name, cs.partition)
		}
		emit(map[string]any{"event": "position", "consumer": name, "offset": c.consumed, "epoch": nil,
			"of": "MarkMessage (the last record's offset + 1): sarama has no position()"})
	case "offsetsfortimes":
		timestamp, err := strconv.ParseInt(cmd[2], 10, 64)
		if err != nil {
			return err
		}
		return cs.offsetForTime(name, timestamp)
	case "until":
		offset, err := strconv.ParseInt(cmd[2], 10, 64)
		if err != nil {
			return err
		}
		cs.until[name] = offset
		delete(cs.held, name)
	case "pause", "resume":
		c, err := cs.get(name)
		if err != nil {
			return err
		}
		partitions := map[string][]int32{cs.topic: {cs.partition}}
		switch { // a partition consumer sarama shut down has nothing left to pause
		case c.group != nil && cmd[0] == "pause":
			c.group.Pause(partitions)
		case c.group != nil:
			c.group.Resume(partitions)
		case c.pc != nil && cmd[0] == "pause":
			c.pc.Pause()
		case c.pc != nil:
			c.pc.Resume()
		}
	case "close":
		if c := cs.polling[name]; c != nil {
			c.close()
			delete(cs.polling, name)
		}
		emit(map[string]any{"event": "closed", "consumer": name})
	default:
		return fmt.Errorf("unknown command %s", cmd[0])
	}
	return nil
}

// consume keeps c a member of its group: Consume returns at each rebalance and is called again.
func (cs *consumers) consume(ctx context.Context, c *consumer) {
	h := handler{claims: c.claims}
	for ctx.Err() == nil {
		if err := c.group.Consume(ctx, []string{cs.topic}, h); err != nil && ctx.Err() == nil {
			event := describeError(err)
			event["event"], event["consumer"] = "error", c.name
			emit(event)
			select { // sarama's own retry backoff before it joins again
			case <-ctx.Done():
			case <-time.After(c.client.Config().Consumer.Group.Rebalance.Retry.Backoff):
			}
		}
	}
}

// committed reads the group's commit back from its coordinator (OffsetFetch), as Java's committed() does.
func (cs *consumers) committed(c *consumer) (int64, int32, error) {
	admin, err := sarama.NewClusterAdminFromClient(c.client) // not closed: that would close the consumer's client
	if err != nil {
		return 0, 0, err
	}
	// Java's committed() retries until its API timeout, finding the coordinator again; sarama's admin
	// retries coordinator errors only, not a coordinator it cannot reach (a node the scene stopped).
	var resp *sarama.OffsetFetchResponse
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err = admin.ListConsumerGroupOffsets(c.groupID, map[string][]int32{cs.topic: {cs.partition}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, err
		}
		_ = c.client.RefreshCoordinator(c.groupID)
		<-time.After(c.client.Config().Metadata.Retry.Backoff) // sarama's own backoff between attempts
	}
	block := resp.GetBlock(cs.topic, cs.partition)
	if block == nil {
		return 0, 0, fmt.Errorf("OffsetFetch answered no partition %d", cs.partition)
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return 0, 0, block.Err
	}
	return block.Offset, block.LeaderEpoch, nil
}

// offsetForTime answers offset_for_time with Client.GetOffset, sarama's lookup by time (ListOffsets):
// it returns the offset alone, so the epoch and the found timestamp are null.
func (cs *consumers) offsetForTime(name string, timestamp int64) error {
	client, err := sarama.NewClient(brokers(cs.bootstrap), baseConfig(name))
	if err != nil {
		return err
	}
	defer client.Close()
	offset, err := client.GetOffset(cs.topic, cs.partition, timestamp)
	event := map[string]any{"event": "offset_for_time", "consumer": name, "timestamp": timestamp, "offset": offset,
		"epoch": nil, "found_timestamp": nil, "error": nil}
	if err != nil {
		var kerr sarama.KError
		if !errors.As(err, &kerr) {
			return err
		}
		event["offset"], event["error"] = int64(-1), describeError(err)["code"]
	}
	emit(event)
	return nil
}

// poll hands over what c's partition consumer has ready (one record where it holds at an offset), and
// its errors; whether it had anything.
func (cs *consumers) poll(c *consumer) bool {
	if c.claims != nil {
		select {
		case cl := <-c.claims:
			if cl.claim.Partition() == cs.partition {
				c.current = &cl
			}
		default:
		}
	}
	any := cs.drainErrors(c)
	if cs.held[c.name] {
		return any
	}
	messages := c.messages()
	if messages == nil {
		return any
	}
	limit := 500
	if _, ok := cs.until[c.name]; ok {
		limit = 1
	}
	for i := 0; i < limit; i++ {
		select {
		case m, ok := <-messages:
			if !ok {
				if c.pc != nil {
					c.pc = nil // shut down (ErrOffsetOutOfRange): sarama sends nothing more
				} else {
					c.current = nil
				}
				return cs.drainErrors(c) || any
			}
			cs.deliver(c, m)
			any = true
			if cs.held[c.name] {
				return any
			}
		default:
			return any
		}
	}
	return any
}

func (cs *consumers) deliver(c *consumer, m *sarama.ConsumerMessage) {
	emit(map[string]any{"event": "record", "consumer": c.name, "offset": m.Offset, "epoch": nil, "value": string(m.Value)})
	c.consumed = m.Offset + 1
	if c.current != nil {
		c.current.session.MarkMessage(m, "")
	}
	if last, ok := cs.until[c.name]; ok && m.Offset >= last {
		cs.held[c.name] = true
		emit(map[string]any{"event": "held", "consumer": c.name, "offset": m.Offset})
	}
}

func (cs *consumers) drainErrors(c *consumer) bool {
	any := false
	for {
		var err error
		select {
		case e, ok := <-c.pcErrors:
			if !ok {
				c.pcErrors = nil
				return any
			}
			err = e
		case e, ok := <-c.groupErrors():
			if !ok {
				return any
			}
			err = e
		default:
			return any
		}
		any = true
		event := describeError(err)
		event["event"], event["consumer"] = "error", c.name
		emit(event)
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
	cs := &consumers{bootstrap: args[0], topic: args[1], partition: int32(partition), polling: map[string]*consumer{},
		until: map[string]int64{}, held: map[string]bool{}}
	commands := make(chan string, 64)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			commands <- strings.TrimSpace(in.Text())
		}
		commands <- "exit"
	}()
	emit(map[string]any{"event": "ready", "client": clientName()})
	for {
		for drained := false; !drained; {
			select {
			case line := <-commands:
				if cs.handle(line) {
					return 0
				}
			default:
				drained = true
			}
		}
		busy := false
		for _, name := range cs.order {
			if c, ok := cs.polling[name]; ok && cs.poll(c) {
				busy = true
			}
		}
		if !busy {
			select { // idle until the next command or the next record: nothing was ready
			case line := <-commands:
				if cs.handle(line) {
					return 0
				}
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// handle runs one command line; true when it was exit.
func (cs *consumers) handle(line string) bool {
	switch {
	case line == "exit":
		for _, c := range cs.polling {
			c.close()
		}
		emit(map[string]any{"event": "exited"})
		return true
	case line == "":
	default:
		if err := cs.run(strings.Fields(line)); err != nil {
			var lacks lacking
			emit(map[string]any{"event": "command_failed", "command": line, "exception": fmt.Sprintf("%T", err),
				"message": err.Error(), "lacks": errors.As(err, &lacks)})
		} else {
			emit(map[string]any{"event": "done", "command": line})
		}
	}
	return false
}
