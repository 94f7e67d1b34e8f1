package main

// consumers: the KIP-320 truncation consumers (harness/clients/java/Kip320Consumers.java names the
// commands and events), on kafka-go's Reader.
//
//	kcts-kafka-go -tag=MARKER consumers BOOTSTRAP TOPIC PARTITION
//
//	assign NAME RESET OFFSET           a Reader of the partition (no GroupID), SetOffset(OFFSET)
//	seekepoch NAME RESET OFFSET EPOCH  command_failed, lacks: kafka-go has no seek with a leader epoch
//	subscribe NAME RESET GROUP [ISOLATION]
//	                                   a Reader with GroupID; RESET earliest/latest is StartOffset
//	                                   (FirstOffset/LastOffset), used where the group committed nothing
//	RESET none                         kafka-go has no "no reset" policy: none sets
//	                                   ReaderConfig.OffsetOutOfRangeError, its one knob that makes an
//	                                   out-of-range offset an error (when the partition reader starts)
//	position NAME                      the offset CommitMessages would commit (the last message's
//	                                   offset + 1): Reader.Offset() is -1 for a group's reader
//	commit NAME                        CommitMessages(the last message handed over), synchronous
//	                                   (CommitInterval 0); answers with what OffsetFetch reads back
//	                                   (Client.OffsetFetch gives no leader epoch: null)
//	pause NAME / resume NAME           kafka-go has no Pause: the application stops reading (FetchMessage)
//	until NAME OFFSET                  stop handing records over once the record at OFFSET was (then "held")
//	offsetsfortimes NAME TIMESTAMP     Client.ListOffsets with TimeOffsetOf: an offset and its
//	                                   timestamp, no leader epoch (null)
//	close NAME
//	exit
//
// Events: ready, record {consumer, offset, epoch: null (kafka.Message has no leader epoch), value},
// error {consumer, code, message}, committed, position, held, offset_for_time, closed, done,
// command_failed {command, exception, message, lacks}, exited.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

type fetched struct {
	msg kafka.Message
	err error
}

type consumer struct {
	name     string
	reader   *kafka.Reader
	group    string
	fetched  chan fetched
	cancel   context.CancelFunc
	paused   bool
	last     *kafka.Message // the last message handed over
	consumed int64          // the offset after it; -1: none yet
}

type consumers struct {
	bootstrap string
	topic     string
	partition int
	polling   map[string]*consumer
	until     map[string]int64
	held      map[string]bool
	order     []string
}

// lacking is a command kafka-go has no API for: its command_failed says so (`lacks`).
type lacking struct{ what string }

func (l lacking) Error() string { return l.what }

func (cs *consumers) reader(name, reset, group, isolation string) (*kafka.Reader, error) {
	cfg := kafka.ReaderConfig{
		Brokers: strings.Split(cs.bootstrap, ","), Topic: cs.topic, GroupID: group,
		Dialer:         &kafka.Dialer{ClientID: name, Timeout: 10 * time.Second, DualStack: true},
		MaxWait:        250 * time.Millisecond, // a fetch returns soon, as the other drivers' polls do
		CommitInterval: 0,                      // CommitMessages is synchronous
		ErrorLogger:    stderrLogger{},
	}
	if group == "" {
		cfg.Partition = cs.partition
	}
	switch reset {
	case "earliest":
		cfg.StartOffset = kafka.FirstOffset
	case "latest":
		cfg.StartOffset = kafka.LastOffset
	case "none":
		cfg.OffsetOutOfRangeError = true
	default:
		return nil, fmt.Errorf("unknown reset %q (earliest, latest, none)", reset)
	}
	switch isolation {
	case "", "read_uncommitted":
	case "read_committed":
		cfg.IsolationLevel = kafka.ReadCommitted
	default:
		return nil, fmt.Errorf("unknown isolation %q (read_uncommitted, read_committed)", isolation)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return kafka.NewReader(cfg), nil
}

// start reads c's Reader in the background, one message at a time: the poll loop takes each when it
// hands records over, so a held or paused consumer is handed nothing more.
func (cs *consumers) start(c *consumer) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.fetched = cancel, make(chan fetched)
	go func() {
		for {
			m, err := c.reader.FetchMessage(ctx)
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return
			}
			select {
			case c.fetched <- fetched{m, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	cs.polling[c.name] = c
	cs.order = append(cs.order, c.name)
}

func (cs *consumers) get(name string) (*consumer, error) {
	if c := cs.polling[name]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no consumer %s", name)
}

func (cs *consumers) client(name string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(strings.Split(cs.bootstrap, ",")...), Timeout: 15 * time.Second,
		Transport: &kafka.Transport{ClientID: name, MetadataTTL: time.Second}}
}

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
		r, err := cs.reader(name, cmd[2], "", "")
		if err != nil {
			return err
		}
		if err := r.SetOffset(offset); err != nil {
			r.Close()
			return err
		}
		cs.start(&consumer{name: name, reader: r, consumed: -1})
	case "seekepoch":
		return lacking{"kafka-go has no seek with a leader epoch: Reader.SetOffset(offset int64) takes an offset " +
			"only, and no kafka-go consumer API takes or returns a leader epoch (reader.go, kafka-go " +
			moduleVersion() + ")"}
	case "subscribe":
		if len(cmd) < 4 {
			return fmt.Errorf("subscribe NAME RESET GROUP [ISOLATION]")
		}
		isolation := ""
		if len(cmd) > 4 {
			isolation = cmd[4]
		}
		r, err := cs.reader(name, cmd[2], cmd[3], isolation)
		if err != nil {
			return err
		}
		cs.start(&consumer{name: name, reader: r, group: cmd[3], consumed: -1})
	case "commit":
		c, err := cs.get(name)
		if err != nil {
			return err
		}
		if c.group == "" || c.last == nil {
			return fmt.Errorf("%s has no group or consumed nothing to commit", name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := c.reader.CommitMessages(ctx, *c.last); err != nil {
			return err
		}
		offset, err := cs.committed(ctx, name, c.group)
		if err != nil {
			return err
		}
		emit(map[string]any{"event": "committed", "consumer": name, "offset": offset, "epoch": nil})
	case "position":
		c, err := cs.get(name)
		if err != nil {
			return err
		}
		if c.consumed < 0 {
			return fmt.Errorf("%s has consumed nothing of partition %d", name, cs.partition)
		}
		emit(map[string]any{"event": "position", "consumer": name, "offset": c.consumed, "epoch": nil,
			"of": "CommitMessages (the last message's offset + 1): Reader.Offset() is -1 in a group"})
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
		c.paused = cmd[0] == "pause"
	case "close":
		if c := cs.polling[name]; c != nil {
			c.cancel()
			c.reader.Close() // a group's reader leaves the group
			delete(cs.polling, name)
		}
		emit(map[string]any{"event": "closed", "consumer": name})
	default:
		return fmt.Errorf("unknown command %s", cmd[0])
	}
	return nil
}

// committed reads the group's commit back from its coordinator (OffsetFetch), as Java's committed() does.
func (cs *consumers) committed(ctx context.Context, name, group string) (int64, error) {
	resp, err := cs.client(name).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group,
		Topics: map[string][]int{cs.topic: {cs.partition}}})
	if err != nil {
		return 0, err
	}
	if resp.Error != nil {
		return 0, resp.Error
	}
	for _, p := range resp.Topics[cs.topic] {
		if p.Partition == cs.partition {
			return p.CommittedOffset, p.Error
		}
	}
	return 0, fmt.Errorf("OffsetFetch answered no partition %d", cs.partition)
}

// offsetForTime answers offset_for_time with Client.ListOffsets of TimeOffsetOf(TIMESTAMP): kafka-go
// returns the offset and its timestamp, no leader epoch.
func (cs *consumers) offsetForTime(name string, timestamp int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := cs.client(name).ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		cs.topic: {kafka.TimeOffsetOf(cs.partition, time.UnixMilli(timestamp))}}})
	if err != nil {
		return err
	}
	for _, p := range resp.Topics[cs.topic] {
		if p.Partition != cs.partition {
			continue
		}
		event := map[string]any{"event": "offset_for_time", "consumer": name, "timestamp": timestamp, "offset": int64(-1),
			"epoch": nil, "found_timestamp": nil, "error": nil}
		for offset, at := range p.Offsets {
			event["offset"], event["found_timestamp"] = offset, at.UnixMilli()
		}
		if p.Error != nil {
			event["error"] = describeError(p.Error)["code"]
		}
		emit(event)
		return nil
	}
	return fmt.Errorf("ListOffsets answered no partition %d", cs.partition)
}

// poll hands over what c's Reader has fetched (one record where it holds at an offset); whether it had anything.
func (cs *consumers) poll(c *consumer) bool {
	if c.paused || cs.held[c.name] {
		return false
	}
	limit := 500
	if _, ok := cs.until[c.name]; ok {
		limit = 1
	}
	for i := 0; i < limit; i++ {
		select {
		case f := <-c.fetched:
			if f.err != nil {
				event := describeError(f.err)
				event["event"], event["consumer"] = "error", c.name
				emit(event)
				return true
			}
			m := f.msg
			emit(map[string]any{"event": "record", "consumer": c.name, "offset": m.Offset, "epoch": nil,
				"value": string(m.Value)})
			c.last, c.consumed = &m, m.Offset+1
			if last, ok := cs.until[c.name]; ok && m.Offset >= last {
				cs.held[c.name] = true
				emit(map[string]any{"event": "held", "consumer": c.name, "offset": m.Offset})
				return true
			}
		default:
			return i > 0
		}
	}
	return true
}

func runConsumers(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "consumers BOOTSTRAP TOPIC PARTITION")
		return 2
	}
	partition, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cs := &consumers{bootstrap: args[0], topic: args[1], partition: partition, polling: map[string]*consumer{},
		until: map[string]int64{}, held: map[string]bool{}}
	commands := make(chan string, 64)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			commands <- strings.TrimSpace(in.Text())
		}
		commands <- "exit"
	}()
	emit(map[string]any{"event": "ready", "client": "kafka-go " + moduleVersion()})
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
			c.cancel()
			c.reader.Close()
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
