// The fault checker's client (test/fault/README in docs/fault-testing.md):
//
//	fault-workload produce --bootstrap H:P[,..] --topic T --partitions N --producers K --prefix run-3 --rate 200
//
// runs K idempotent acks=all producers (franz-go's defaults: idempotent,
// acks=all, retries without limit, no delivery timeout) writing unique values
// "<prefix>-<producer>-<seq>" round-robin over the partitions, and prints one
// JSON line per outcome: {"a":[partition,offset,"value"]} for an acknowledged
// record, {"f":[partition,"value","error"]} for one the client gave up on.
// Closing stdin (or SIGTERM) stops new records; in-flight ones get --drain-ms to
// finish, then the program prints {"done":{"acked":n,"failed":n,"unfinished":n}}.
//
//	fault-workload read --bootstrap H:P[,..] --topic T --partitions N --timeout-ms 15000
//
// checks that reads are served: consumes each partition from the start until
// it gave a record or the timeout passed; prints
// {"read":{"partition":p,"read":n}} per partition. (The availability check's
// acks=all writes go through kafkajs, test/fault/workload.ts: franz-go reports
// a record that ran out of retries without the broker's error code.)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func emit(v any) {
	b, _ := json.Marshal(v)
	out.Lock()
	out.w.Write(b)
	out.w.WriteByte('\n')
	out.w.Flush()
	out.Unlock()
}

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "TIMEOUT"
	}
	return err.Error()
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fault-workload produce|read [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "", "host:port[,host:port]")
	topic := fs.String("topic", "", "topic")
	partitions := fs.Int("partitions", 3, "partitions of the topic")
	producers := fs.Int("producers", 2, "producers (produce)")
	prefix := fs.String("prefix", "v", "value prefix (produce)")
	rate := fs.Int("rate", 200, "records per second over all producers (produce)")
	drainMs := fs.Int("drain-ms", 30000, "time in-flight records get after stdin closes (produce)")
	timeoutMs := fs.Int("timeout-ms", 15000, "how long to wait for the reads (read)")
	_ = fs.Parse(os.Args[2:])
	seeds := strings.Split(*bootstrap, ",")
	switch os.Args[1] {
	case "produce":
		produce(seeds, *topic, *partitions, *producers, *prefix, *rate, time.Duration(*drainMs)*time.Millisecond)
	case "read":
		read(seeds, *topic, *partitions, time.Duration(*timeoutMs)*time.Millisecond)
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

func produce(seeds []string, topic string, partitions, producers int, prefix string, rate int, drain time.Duration) {
	stop := make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	go func() {
		// stdin closing is the harness saying "stop".
		buf := make([]byte, 64)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				halt()
				return
			}
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; halt() }()

	var acked, failed, started atomic.Int64
	var wg sync.WaitGroup
	clients := make([]*kgo.Client, producers)
	for i := range clients {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(seeds...),
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.ProducerLinger(5*time.Millisecond),
			kgo.RequestTimeoutOverhead(5*time.Second),
			kgo.ProduceRequestTimeout(10*time.Second),
			kgo.MaxBufferedRecords(100000),
			kgo.UnknownTopicRetries(-1),
			kgo.MetadataMinAge(250*time.Millisecond),
		)
		if err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			os.Exit(1)
		}
		clients[i] = cl
	}
	interval := time.Duration(int64(time.Second) * int64(producers) / int64(max(rate, 1)))
	for i, cl := range clients {
		wg.Add(1)
		go func(id int, cl *kgo.Client) {
			defer wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				// Never block in Produce (it waits when the buffer is full, e.g. while a
				// partition is offline): skip the tick, so closing stdin stops us at once.
				if cl.BufferedProduceRecords() >= 1000 {
					seq--
					continue
				}
				p := int32((seq + id) % partitions)
				value := fmt.Sprintf("%s-%d-%d", prefix, id, seq)
				started.Add(1)
				cl.Produce(context.Background(), &kgo.Record{Partition: p, Value: []byte(value)}, func(r *kgo.Record, err error) {
					if err != nil {
						failed.Add(1)
						emit(map[string]any{"f": []any{r.Partition, string(r.Value), errName(err)}})
						return
					}
					acked.Add(1)
					emit(map[string]any{"a": []any{r.Partition, r.Offset, string(r.Value)}})
				})
			}
		}(i, cl)
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	for _, cl := range clients {
		_ = cl.Flush(ctx)
	}
	cancel()
	// Records still buffered after the drain are unfinished: they may or may not be in the log.
	unfinished := started.Load() - acked.Load() - failed.Load()
	emit(map[string]any{"done": map[string]int64{"acked": acked.Load(), "failed": failed.Load(), "unfinished": unfinished}})
	out.Lock()
	out.w.Flush()
	out.Unlock()
	os.Exit(0)
}

type readResult struct {
	Partition int32 `json:"partition"`
	Read      int   `json:"read"`
}

// read consumes every partition from the start until each gave a record or the timeout passed.
func read(seeds []string, topic string, partitions int, timeout time.Duration) {
	results := make([]readResult, partitions)
	offsets := map[int32]kgo.Offset{}
	for p := 0; p < partitions; p++ {
		results[p].Partition = int32(p)
		offsets[int32(p)] = kgo.NewOffset().AtStart()
	}
	cons, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	for {
		missing := false
		for _, r := range results {
			if r.Read == 0 {
				missing = true
			}
		}
		if !missing || ctx.Err() != nil {
			break
		}
		fetches := cons.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) { results[r.Partition].Read++ })
	}
	cancel()
	cons.Close()
	for _, r := range results {
		emit(map[string]any{"read": r})
	}
	os.Exit(0)
}
