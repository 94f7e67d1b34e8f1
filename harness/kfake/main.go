// kcts-kfake: franz-go's kfake fake cluster as a standalone target for the conformance suite.
// It listens on 127.0.0.1 only, prints one JSON line with its broker addresses once ready, and
// exits on SIGTERM/SIGINT or when its stdin closes (its parent, the harness, is gone).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	brokers := flag.Int("brokers", 3, "number of fake brokers")
	_ = flag.String("tag", "", "ignored: a label on the command line by which the harness finds its processes")
	flag.Parse()

	c, err := kfake.NewCluster(kfake.NumBrokers(*brokers))
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	defer c.Close()

	ready, _ := json.Marshal(map[string]any{"name": "ready", "addrs": c.ListenAddrs()})
	fmt.Println(string(ready))

	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sigs:
	case <-done:
	}
}
