// kcts-kfake: franz-go's kfake fake cluster as a standalone target for the conformance suite.
//
// It listens on 127.0.0.1 only, prints one JSON line with its broker addresses once ready
// ({"name":"ready","addrs":[...],"nodes":{"0":"127.0.0.1:port",...},"probes":{...}}), and exits
// on SIGTERM/SIGINT or when its stdin closes (its parent, the harness, is gone).
//
// Stdin is also a command channel, one JSON object a line, each answered by one line on stdout:
//
//	{"id":1,"op":"move","topic":"t","partition":0,"node":2} -> {"id":1,"ok":true,"leader":2}
//	{"id":2,"op":"remove","node":1}                         a stopped or killed broker
//	{"id":3,"op":"add","node":1,"port":40123}               the same broker restarted
//	{"id":4,"op":"pause","node":0,"fence_ms":3000}          a SIGSTOP'd broker (fenced after 3 s)
//	{"id":5,"op":"resume","node":0}                         and SIGCONT
//
// A failed command answers {"id":N,"error":"..."}. Commands run one at a time, in order. "remove"
// answers once the node's listener and every connection to it are closed: from then on it answers
// nothing, on any connection (see trackedListener).
//
// With -sasl-users (SASL/PLAIN, ACLs enforced, -superuser bypassing them), "probes" names one
// credential-free address per node for the harness's own state queries (see probeProxy).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// trackedListener remembers every connection it accepted. kfake's RemoveNode closes a broker's
// listener but keeps serving the connections already open to it; a stopped broker's clients see
// their connections drop, so "remove" closes them here.
//
// A connection the kernel completed before the listener closed is either still in its accept queue
// (reset by the listener's close) or already taken by Accept. Accept registers it under mu, and
// closeConns marks the listener closed under mu: one taken from the kernel just before the close
// but registered after closeConns looked is closed by Accept, never handed to kfake to serve.
// (Without the mark, a client that connected just before a stop still got answers after it.)
type trackedListener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool // closeConns ran: nothing accepted from now on is served
}

func (l *trackedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = conn.Close()
		return nil, net.ErrClosed // kfake's accept loop ends, as on the closed listener
	}
	l.conns[conn] = struct{}{}
	return &trackedConn{Conn: conn, l: l}, nil
}

// closeConns closes every connection accepted so far and any Accept still hands back; on return
// (each Close returns once its socket is closed) no connection to this listener is served.
func (l *trackedListener) closeConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for conn := range l.conns {
		_ = conn.Close()
	}
	l.conns = map[net.Conn]struct{}{}
}

type trackedConn struct {
	net.Conn
	l    *trackedListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c.Conn)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// control is the harness's hold on the cluster: listeners by port, broker ports by node id,
// paused nodes, and a pending controller change.
type control struct {
	c *kfake.Cluster

	mu        sync.Mutex
	listeners map[int]*trackedListener // by port
	ports     map[int32]int            // node id -> port, for every node ever started (removed ones too)
	paused    map[int32]chan struct{}  // closed on resume

	saslUser, saslPass string // the super user, with which the harness's own connections authenticate (if SASL)

	// kfake's controller is a fixed broker (the last one at start): CreateTopics, DeleteTopics and
	// CreatePartitions answer NOT_CONTROLLER on every other broker, and Metadata names it. Removing
	// it would leave the cluster without one for good (a re-added node is a new broker), so the
	// controller moves to a running node, as KRaft brokers name any live broker the controller.
	controller     int32 // the node kfake's controller is, or will be once controllerNode is applied
	controllerNode int32 // the node kfake's controller should be; -1: leave it as it is

	generation, installed int // intercept's installations, and the one in place (0: none)
}

func (ctl *control) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	tl := &trackedListener{Listener: ln, conns: map[net.Conn]struct{}{}}
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(p)
	ctl.mu.Lock()
	ctl.listeners[port] = tl
	ctl.mu.Unlock()
	return tl, nil
}

// ensureControl installs intercept as kfake's control function, once, while the harness needs it
// (a paused node, a controller to move); ctl.mu must be held. Without one, kfake runs as shipped.
func (ctl *control) ensureControl() {
	if ctl.installed != 0 {
		return
	}
	ctl.generation++
	gen := ctl.generation
	ctl.installed = gen
	ctl.c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) { return ctl.intercept(gen) })
}

// intercept runs before kfake handles each request, on any broker, serially with kfake's run loop
// (kfake waits for a control function to return or sleep): there it may touch the cluster's state.
func (ctl *control) intercept(gen int) (kmsg.Response, error, bool) {
	ctl.c.KeepControl()
	ctl.applyController()
	ctl.mu.Lock()
	held := ctl.paused[ctl.c.CurrentNode()]
	ctl.mu.Unlock()
	if held != nil {
		// SleepControl hands kfake's loop back to every other request (other connections, other
		// brokers) until the wakeup returns; this request, and the ones behind it on its
		// connection, wait for resume.
		ctl.c.SleepControl(func() { <-held })
	}
	ctl.mu.Lock()
	if len(ctl.paused) == 0 && ctl.controllerNode < 0 && ctl.installed == gen {
		// Nothing left to do: kfake goes back to answering without us (a control function also
		// keeps the last request of every connection it saw, which this lets go).
		ctl.installed = 0
		ctl.c.DropControl()
	}
	ctl.mu.Unlock()
	return nil, nil, false // not handled: kfake answers the request itself
}

// applyController points kfake's controller at ctl.controllerNode. kfake exports no way to move
// it, so this writes the unexported field; it runs inside a control function, where kfake's loop
// is waiting on us, so nothing reads the field meanwhile.
func (ctl *control) applyController() {
	ctl.mu.Lock()
	node := ctl.controllerNode
	ctl.controllerNode = -1
	ctl.mu.Unlock()
	if node < 0 {
		return
	}
	if err := setController(ctl.c, node); err != nil {
		fmt.Fprintf(os.Stderr, "kcts-kfake: cannot move the controller to node %d: %v\n", node, err)
	}
}

func setController(c *kfake.Cluster, node int32) error {
	v := reflect.ValueOf(c).Elem()
	ctrl, bs := v.FieldByName("controller"), v.FieldByName("bs")
	if !ctrl.IsValid() || !bs.IsValid() || bs.Kind() != reflect.Slice {
		return errors.New("this kfake version has no controller/bs fields")
	}
	bs = reflect.NewAt(bs.Type(), unsafe.Pointer(bs.UnsafeAddr())).Elem()
	for i := 0; i < bs.Len(); i++ {
		b := bs.Index(i)
		id := b.Elem().FieldByName("node")
		if id.IsValid() && int32(id.Int()) == node {
			reflect.NewAt(ctrl.Type(), unsafe.Pointer(ctrl.UnsafeAddr())).Elem().Set(b)
			return nil
		}
	}
	return fmt.Errorf("node %d is not running", node)
}

// controllerID reads which node kfake made its controller, before any request can move it.
func controllerID(c *kfake.Cluster) int32 {
	ctrl := reflect.ValueOf(c).Elem().FieldByName("controller")
	if !ctrl.IsValid() || ctrl.Kind() != reflect.Pointer || ctrl.IsNil() {
		return -1
	}
	id := ctrl.Elem().FieldByName("node")
	if !id.IsValid() {
		return -1
	}
	return int32(id.Int())
}

type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Node      *int32 `json:"node"`
	Port      int    `json:"port"`
	FenceMs   int    `json:"fence_ms"` // pause: move the node's leaderships away after this long (0: never)
}

func (ctl *control) handle(req request) (map[string]any, error) {
	if req.Node == nil {
		return nil, fmt.Errorf("op %q needs a node", req.Op)
	}
	node := *req.Node
	switch req.Op {
	case "move":
		if err := ctl.c.MoveTopicPartition(req.Topic, req.Partition, node); err != nil {
			return nil, fmt.Errorf("move %s-%d to node %d: %w", req.Topic, req.Partition, node, err)
		}
		return map[string]any{"leader": ctl.c.LeaderFor(req.Topic, req.Partition)}, nil

	case "remove":
		return ctl.remove(node)

	case "add":
		ctl.mu.Lock()
		port := req.Port
		if port == 0 {
			port = ctl.ports[node]
		}
		ctl.mu.Unlock()
		id, port, err := ctl.c.AddNode(node, port)
		if err != nil {
			return nil, fmt.Errorf("add node %d on port %d: %w", node, port, err)
		}
		ctl.mu.Lock()
		ctl.ports[id] = port
		ctl.mu.Unlock()
		return map[string]any{"node": id, "port": port}, nil

	case "pause":
		ctl.mu.Lock()
		defer ctl.mu.Unlock()
		if _, ok := ctl.paused[node]; !ok {
			held := make(chan struct{})
			ctl.paused[node] = held
			ctl.ensureControl()
			if req.FenceMs > 0 {
				go ctl.fenceLoop(node, held, time.Duration(req.FenceMs)*time.Millisecond)
			}
		}
		return map[string]any{}, nil

	case "resume":
		ctl.mu.Lock()
		defer ctl.mu.Unlock()
		if ch, ok := ctl.paused[node]; ok {
			close(ch)
			delete(ctl.paused, node)
		}
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("unknown op %q", req.Op)
}

func (ctl *control) remove(node int32) (map[string]any, error) {
	ctl.mu.Lock()
	port, known := ctl.ports[node]
	ctl.mu.Unlock()
	if !known {
		return nil, fmt.Errorf("node %d not found", node)
	}
	ctl.mu.Lock()
	if ctl.controller == node {
		// Pick the next controller among the running others before the node goes; the next
		// request (the first that could ask for the controller) applies it.
		next := int32(-1)
		for _, skipPaused := range []bool{true, false} {
			for id, idPort := range ctl.ports {
				_, paused := ctl.paused[id]
				if id != node && ctl.listeners[idPort] != nil && !(skipPaused && paused) && (next < 0 || id < next) {
					next = id
				}
			}
			if next >= 0 {
				break
			}
		}
		if next >= 0 {
			ctl.controller, ctl.controllerNode = next, next
			ctl.ensureControl() // before the node goes: no request is answered by the old controller after
		}
	}
	ctl.mu.Unlock()
	if err := ctl.c.RemoveNode(node); err != nil {
		return nil, fmt.Errorf("remove node %d: %w", node, err)
	}
	ctl.mu.Lock()
	tl := ctl.listeners[port]
	delete(ctl.listeners, port)
	held := ctl.paused[node]
	delete(ctl.paused, node)
	ctl.mu.Unlock()
	if tl != nil {
		tl.closeConns()
	}
	if held != nil {
		close(held) // a stopped node holds nothing: its held requests go, their connections are closed
	}
	return map[string]any{"port": port}, nil
}

// probeProxy is the harness's credential-free way into a SASL kfake, as a local SASL cluster's
// HARNESS listener is: each connection to it is authenticated to the node's broker as the super
// user, then carries bytes both ways unchanged. A stopped node's proxy closes what it accepts.
type probeProxy struct {
	ctl  *control
	node int32
}

func (p *probeProxy) serve(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go p.relay(conn)
	}
}

func (p *probeProxy) relay(conn net.Conn) {
	defer conn.Close()
	broker, err := p.ctl.dial(p.node)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kcts-kfake: probe of node %d: %v\n", p.node, err)
		return
	}
	defer broker.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(broker, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, broker); done <- struct{}{} }()
	<-done // either side gone: the deferred closes end the other copy
}

// dial connects to a running node's listener, authenticated as the super user where SASL is on.
func (ctl *control) dial(node int32) (net.Conn, error) {
	ctl.mu.Lock()
	port := ctl.ports[node]
	running := ctl.listeners[port] != nil
	ctl.mu.Unlock()
	if !running {
		return nil, fmt.Errorf("node %d is stopped", node)
	}
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	if ctl.saslUser != "" {
		if err := authenticate(conn, ctl.saslUser, ctl.saslPass); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate v1 (PLAIN) on a fresh connection.
func authenticate(conn net.Conn, user, pass string) error {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kcts-probe"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := roundTrip(conn, f, hs, hsResp, 1); err != nil {
		return err
	}
	if hsResp.ErrorCode != 0 {
		return fmt.Errorf("SaslHandshake: error %d", hsResp.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(1)
	auth.SASLAuthBytes = []byte("\x00" + user + "\x00" + pass)
	authResp := kmsg.NewPtrSASLAuthenticateResponse()
	if err := roundTrip(conn, f, auth, authResp, 2); err != nil {
		return err
	}
	if authResp.ErrorCode != 0 {
		return fmt.Errorf("SaslAuthenticate as %s: error %d", user, authResp.ErrorCode)
	}
	return nil
}

func roundTrip(conn net.Conn, f *kmsg.RequestFormatter, req kmsg.Request, resp kmsg.Response, corr int32) error {
	if _, err := conn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return err
	}
	size := make([]byte, 4)
	if _, err := io.ReadFull(conn, size); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(size))
	if _, err := io.ReadFull(conn, body); err != nil {
		return err
	}
	resp.SetVersion(req.GetVersion())
	body = body[4:] // the correlation id; neither of these responses has a flexible header
	return resp.ReadFrom(body)
}

// fenceLoop is the controller's side of a paused broker: an Apache Kafka controller fences a
// broker whose heartbeats stop (broker.session.timeout.ms) and elects other leaders for its
// partitions, while the broker itself, frozen, still holds its sockets. kfake has no heartbeats,
// so after `after` every partition the paused node leads moves to another running node, at the
// next leader epoch, and again for any it is given later, until the node resumes or is removed.
func (ctl *control) fenceLoop(node int32, held chan struct{}, after time.Duration) {
	wait := time.NewTimer(after)
	defer wait.Stop()
	for {
		select {
		case <-held:
			return
		case <-wait.C:
		}
		if err := ctl.fence(node); err != nil {
			fmt.Fprintf(os.Stderr, "kcts-kfake: fencing paused node %d: %v\n", node, err)
		}
		wait.Reset(250 * time.Millisecond)
	}
}

func (ctl *control) fence(node int32) error {
	ctl.mu.Lock()
	var live []int32 // running and not paused: where leaderships may go
	for id, port := range ctl.ports {
		if _, paused := ctl.paused[id]; !paused && ctl.listeners[port] != nil {
			live = append(live, id)
		}
	}
	ctl.mu.Unlock()
	if len(live) == 0 {
		return nil // no broker to elect: the partitions stay with the paused one, as without a live replica
	}
	slices.Sort(live)
	ctl.mu.Lock()
	if ctl.controller == node { // a frozen broker answers no CreateTopics either: a live one takes the role
		ctl.controller, ctl.controllerNode = live[0], live[0]
	}
	ctl.mu.Unlock()
	conn, err := ctl.dial(live[0])
	if err != nil {
		return err
	}
	defer conn.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(8) // all topics (Topics nil), leader epochs, and a header without tagged fields
	resp := kmsg.NewPtrMetadataResponse()
	if err := roundTrip(conn, kmsg.NewRequestFormatter(kmsg.FormatterClientID("kcts-fence")), req, resp, 1); err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			if p.Leader != node {
				continue
			}
			to := live[rand.Intn(len(live))]
			for _, r := range p.Replicas { // as a controller does: the first live replica in order
				if slices.Contains(live, r) {
					to = r
					break
				}
			}
			if err := ctl.c.MoveTopicPartition(*t.Topic, p.Partition, to); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseUsers(s string) (map[string]string, error) {
	users := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if pair == "" {
			continue
		}
		user, pass, ok := strings.Cut(pair, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("-sasl-users wants user:password,...; got %q", pair)
		}
		users[user] = pass
	}
	return users, nil
}

func main() {
	brokers := flag.Int("brokers", 3, "number of fake brokers")
	saslUsers := flag.String("sasl-users", "", "user:password,...: SASL/PLAIN users, with ACLs enforced")
	superuser := flag.String("superuser", "", "the -sasl-users user who bypasses ACLs")
	_ = flag.String("tag", "", "ignored: a label on the command line by which the harness finds its processes")
	flag.Parse()

	ctl := &control{
		listeners:      map[int]*trackedListener{},
		ports:          map[int32]int{},
		paused:         map[int32]chan struct{}{},
		controllerNode: -1,
	}
	opts := []kfake.Opt{kfake.NumBrokers(*brokers), kfake.ListenFn(ctl.listen)}
	if *saslUsers != "" {
		users, err := parseUsers(*saslUsers)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kcts-kfake: %v\n", err)
			os.Exit(2)
		}
		if _, ok := users[*superuser]; !ok {
			fmt.Fprintf(os.Stderr, "kcts-kfake: -superuser %q is not one of -sasl-users\n", *superuser)
			os.Exit(2)
		}
		opts = append(opts, kfake.EnableSASL(), kfake.EnableACLs())
		for user, pass := range users {
			if user == *superuser {
				opts = append(opts, kfake.Superuser("PLAIN", user, pass))
			} else {
				opts = append(opts, kfake.User("PLAIN", user, pass))
			}
		}
	}

	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	defer c.Close()
	ctl.c = c
	ctl.controller = controllerID(c)
	addrs := c.ListenAddrs()
	nodes := map[string]string{}
	for i, addr := range addrs { // kfake numbers its first brokers 0.. in listener order
		_, p, _ := net.SplitHostPort(addr)
		ctl.ports[int32(i)], _ = strconv.Atoi(p)
		nodes[strconv.Itoa(i)] = addr
	}
	probes := map[string]string{}
	if *saslUsers != "" {
		users, _ := parseUsers(*saslUsers)
		ctl.saslUser, ctl.saslPass = *superuser, users[*superuser]
		for id := range ctl.ports {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				fmt.Fprintf(os.Stderr, "kcts-kfake: probe listener: %v\n", err)
				os.Exit(1)
			}
			defer ln.Close()
			p := &probeProxy{ctl: ctl, node: id}
			go p.serve(ln)
			probes[strconv.Itoa(int(id))] = ln.Addr().String()
		}
	}

	var outMu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	write := func(v any) {
		outMu.Lock()
		defer outMu.Unlock()
		_ = out.Encode(v)
	}
	write(map[string]any{"name": "ready", "addrs": addrs, "nodes": nodes, "probes": probes})

	done := make(chan struct{})
	go func() {
		defer close(done) // stdin EOF: the harness is gone
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 64*1024), 1<<20)
		for in.Scan() {
			var req request
			if err := json.Unmarshal(in.Bytes(), &req); err != nil {
				write(map[string]any{"id": req.ID, "error": fmt.Sprintf("bad request %q: %v", in.Text(), err)})
				continue
			}
			reply, err := ctl.handle(req)
			if err != nil {
				write(map[string]any{"id": req.ID, "error": err.Error()})
				continue
			}
			reply["id"], reply["ok"] = req.ID, true
			write(reply)
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sigs:
	case <-done:
	}
}
