// Compatibility-matrix program for franz-go (kgo + kadm). Against one broker it:
//   - creates the topic (kadm CreateTopic) and describes its configs;
//   - produces N keyed records with headers and CreateTime timestamps, one
//     contiguous slice per codec (none, gzip, snappy, lz4, zstd), each with its own
//     idempotent client (franz-go's default), acks=all, manual partitioning;
//   - consumes them in a consumer group (cooperative-sticky, franz-go's default)
//     committing after every poll, verifying every key, value, header, timestamp
//     and the per-partition order;
//   - lists offsets (start, end, after a millisecond, max timestamp, local log start)
//     and the group's lag (kadm Lag).
//
// Content rules are test/clients/content.ts's. Prints one JSON summary line last;
// exit code 0 only when everything passed.
//
//	compat-franz-go --bootstrap 127.0.0.1:9092 --topic t --group g [--count 50000]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	client    = "franz-go"
	alphabet  = "abcdefghijklmnopqrstuvwxyz0123456789"
	maxErrors = 20
)

type options struct {
	bootstrap     string
	topic         string
	group         string
	count         int
	partitions    int
	baseTimestamp int64
	codecs        []string
	timeout       time.Duration
	// KIP-848: consume with kgo.ServerSideBalancer (the consumer group protocol).
	serverSideBalancer bool
}

type operation struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Ms     int64  `json:"ms"`
}

type summary struct {
	Client        string      `json:"client"`
	ClientVersion string      `json:"clientVersion"`
	OK            bool        `json:"ok"`
	Codecs        []string    `json:"codecs"`
	Idempotent    bool        `json:"idempotent"`
	Count         int         `json:"count"`
	Operations    []operation `json:"operations"`
	Notes         []string    `json:"notes"`
	ErrorCount    int         `json:"errorCount"`
	Errors        []string    `json:"errors"`
}

type run struct {
	o         options
	s         summary
	currentOp string
	opErrors  int
	adm       *kadm.Client
}

func (r *run) errorf(format string, args ...any) {
	r.s.ErrorCount++
	r.opErrors++
	if len(r.s.Errors) < maxErrors {
		r.s.Errors = append(r.s.Errors, r.currentOp+": "+fmt.Sprintf(format, args...))
	}
}

// op runs one matrix operation; it passes when it returns no error and reports none.
func (r *run) op(name string, step func() (string, error)) {
	r.currentOp = name
	r.opErrors = 0
	t0 := time.Now()
	detail, err := step()
	if err != nil {
		r.errorf("%v", err)
		detail = err.Error()
	}
	r.s.Operations = append(r.s.Operations, operation{Name: name, OK: r.opErrors == 0, Detail: detail, Ms: time.Since(t0).Milliseconds()})
}

// ---- content (test/clients/content.ts) ----------------------------------------

func recordKey(i int) string { return "k-" + strconv.Itoa(i) }

func recordValue(i int) string {
	length := (i * 7919) % 97
	if i%1000 == 0 {
		length += 10_000
	}
	var b strings.Builder
	b.Grow(length + 16)
	b.WriteString("v-" + strconv.Itoa(i) + "-")
	for j := 0; j < length; j++ {
		b.WriteByte(alphabet[(i+j*31)%36])
	}
	return b.String()
}

func recordHeaders(i int) []kgo.RecordHeader {
	h := []kgo.RecordHeader{{Key: "idx", Value: []byte(strconv.Itoa(i))}, {Key: "src", Value: []byte(client)}}
	if i%5 == 0 {
		h = append(h, kgo.RecordHeader{Key: "empty", Value: []byte{}})
	}
	return h
}

func (r *run) partitionCount(p int) int64 {
	if p >= r.o.count {
		return 0
	}
	return int64((r.o.count - p + r.o.partitions - 1) / r.o.partitions)
}

// expectedOffsetForTimestamp: the first record j >= i of partition p, at offset j / P; -1 when none.
func (r *run) expectedOffsetForTimestamp(i, p int) int64 {
	P := r.o.partitions
	j := i + ((p-i)%P+P)%P
	if j < r.o.count {
		return int64(j / P)
	}
	return -1
}

// ---- steps -------------------------------------------------------------------

func (r *run) createTopic(ctx context.Context) (string, error) {
	resp, err := r.adm.CreateTopic(ctx, int32(r.o.partitions), 1, nil, r.o.topic)
	if err != nil {
		return "", err
	}
	// Wait until metadata lists a leader for every partition.
	deadline := time.Now().Add(30 * time.Second)
	for {
		tds, err := r.adm.ListTopics(ctx, r.o.topic)
		if err == nil {
			td := tds[r.o.topic]
			ready := td.Err == nil && len(td.Partitions) == r.o.partitions
			for _, p := range td.Partitions {
				ready = ready && p.Err == nil && p.Leader >= 0
			}
			if ready {
				return fmt.Sprintf("%d partitions, topic id %s", resp.NumPartitions, resp.ID), nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no leader for every partition after 30 s (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *run) describeConfigs(ctx context.Context) (string, error) {
	rcs, err := r.adm.DescribeTopicConfigs(ctx, r.o.topic)
	if err != nil {
		return "", err
	}
	rc, err := rcs.On(r.o.topic, nil)
	if err != nil {
		return "", err
	}
	if rc.Err != nil {
		return "", rc.Err
	}
	values := map[string]string{}
	for _, c := range rc.Configs {
		values[c.Key] = c.MaybeValue()
	}
	for k, want := range map[string]string{"cleanup.policy": "delete", "compression.type": "producer"} {
		if got, ok := values[k]; !ok || got != want {
			r.errorf("%s = %q (present %v), expected %q", k, got, ok, want)
		}
	}
	return fmt.Sprintf("%d entries, retention.ms=%s", len(rc.Configs), values["retention.ms"]), nil
}

func codecOf(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("unknown codec %q", name)
}

func (r *run) produce(ctx context.Context) (string, error) {
	var parts []string
	n := len(r.o.codecs)
	for s, name := range r.o.codecs {
		codec, err := codecOf(name)
		if err != nil {
			return "", err
		}
		from, to := r.o.count*s/n, r.o.count*(s+1)/n
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(r.o.bootstrap),
			kgo.ClientID("sediment-compat-franz-go"),
			kgo.DefaultProduceTopic(r.o.topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchCompression(codec),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerLinger(5*time.Millisecond),
			kgo.ProducerBatchMaxBytes(1<<20),
			kgo.MaxBufferedRecords(to-from+1),
		)
		if err != nil {
			return "", err
		}
		records := make([]*kgo.Record, 0, to-from)
		for i := from; i < to; i++ {
			records = append(records, &kgo.Record{
				Key:       []byte(recordKey(i)),
				Value:     []byte(recordValue(i)),
				Headers:   recordHeaders(i),
				Timestamp: time.UnixMilli(r.o.baseTimestamp + int64(i)),
				Partition: int32(i % r.o.partitions),
			})
		}
		results := cl.ProduceSync(ctx, records...)
		cl.Close()
		// Results arrive in completion order (per partition batch), not input order.
		acked := 0
		for _, res := range results {
			i, err := strconv.Atoi(strings.TrimPrefix(string(res.Record.Key), "k-"))
			if err != nil {
				r.errorf("acknowledged record with key %q", res.Record.Key)
				continue
			}
			if res.Err != nil {
				r.errorf("record %d: %v", i, res.Err)
				continue
			}
			acked++
			if int(res.Record.Partition) != i%r.o.partitions || res.Record.Offset != int64(i/r.o.partitions) {
				r.errorf("record %d acknowledged at %d/%d, expected %d/%d", i, res.Record.Partition, res.Record.Offset, i%r.o.partitions, i/r.o.partitions)
			}
		}
		if acked != to-from {
			r.errorf("%s slice: %d of %d records acknowledged", name, acked, to-from)
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, to-from))
	}
	return fmt.Sprintf("%d records (%s), idempotent", r.o.count, strings.Join(parts, ", ")), nil
}

func (r *run) consume(ctx context.Context) (string, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(r.o.bootstrap),
		kgo.ClientID("sediment-compat-franz-go"),
		kgo.ConsumerGroup(r.o.group),
		kgo.ConsumeTopics(r.o.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(500*time.Millisecond),
	}
	if r.o.serverSideBalancer {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	seen := make([]byte, r.o.count)
	next := make([]int64, r.o.partitions)
	consumed, commits := 0, 0
	complete := func() bool {
		for p := range next {
			if next[p] < r.partitionCount(p) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(r.o.timeout)
	for !complete() {
		if time.Now().After(deadline) {
			r.errorf("timed out with %d of %d records", consumed, r.o.count)
			break
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollFetches(pctx)
		cancel()
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				r.errorf("fetch %s/%d: %v", t, p, err)
			}
		})
		n := 0
		fetches.EachRecord(func(rec *kgo.Record) {
			n++
			consumed++
			r.verify(rec, seen, next)
		})
		if n > 0 {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				r.errorf("commit: %v", err)
			}
			commits++
		}
	}
	if r.o.serverSideBalancer {
		r.checkConsumerGroup(ctx)
	}
	// Leave the group before the lag check, so the group is Empty.
	cl.LeaveGroup()
	for p := range next {
		if next[p] != r.partitionCount(p) {
			r.errorf("partition %d ended at offset %d, expected %d", p, next[p], r.partitionCount(p))
		}
	}
	missing := bytes.Count(seen, []byte{0})
	if missing > 0 {
		r.errorf("%d records missing", missing)
	}
	return fmt.Sprintf("%d records, %d commits", consumed, commits), nil
}

// checkConsumerGroup: while the member is in the group, ListGroups says its
// type is "consumer" and ConsumerGroupDescribe shows it owning every partition.
func (r *run) checkConsumerGroup(ctx context.Context) {
	listed, err := r.adm.ListGroupsByType(ctx, []string{"consumer"})
	if err != nil {
		r.errorf("list consumer groups: %v", err)
		return
	}
	if g, ok := listed[r.o.group]; !ok || g.GroupType != "consumer" {
		r.errorf("group %s not listed as a consumer group: %v", r.o.group, listed)
	}
	described, err := r.adm.DescribeConsumerGroups(ctx, r.o.group)
	if err != nil {
		r.errorf("describe consumer group: %v", err)
		return
	}
	g := described[r.o.group]
	if g.Err != nil || len(g.Members) != 1 {
		r.errorf("describe consumer group: %v, %d members", g.Err, len(g.Members))
		return
	}
	if n := len(g.Members[0].Assignment[r.o.topic]); n != r.o.partitions {
		r.errorf("the member owns %d of %d partitions (state %s)", n, r.o.partitions, g.State)
	}
}

func (r *run) verify(rec *kgo.Record, seen []byte, next []int64) {
	p := int(rec.Partition)
	where := fmt.Sprintf("partition %d offset %d", p, rec.Offset)
	if p < 0 || p >= r.o.partitions {
		r.errorf("%s: unexpected partition", where)
		return
	}
	if rec.Offset != next[p] {
		r.errorf("%s: expected offset %d next (gap or reorder)", where, next[p])
	}
	next[p] = rec.Offset + 1
	i := -1
	if k := string(rec.Key); strings.HasPrefix(k, "k-") {
		if n, err := strconv.Atoi(k[2:]); err == nil {
			i = n
		}
	}
	if i < 0 || i >= r.o.count {
		r.errorf("%s: unexpected key %q", where, rec.Key)
		return
	}
	if seen[i] != 0 {
		r.errorf("%s: duplicate of record %d", where, i)
		return
	}
	seen[i] = 1
	if want := int64(p) + rec.Offset*int64(r.o.partitions); int64(i) != want {
		r.errorf("%s: holds record %d, expected record %d", where, i, want)
	}
	if string(rec.Value) != recordValue(i) {
		r.errorf("%s: value of record %d differs", where, i)
	}
	want := recordHeaders(i)
	same := len(rec.Headers) == len(want)
	for h := 0; same && h < len(want); h++ {
		same = rec.Headers[h].Key == want[h].Key && bytes.Equal(rec.Headers[h].Value, want[h].Value)
	}
	if !same {
		r.errorf("%s: headers of record %d are %v", where, i, rec.Headers)
	}
	if rec.Attrs.TimestampType() != 0 || rec.Timestamp.UnixMilli() != r.o.baseTimestamp+int64(i) {
		r.errorf("%s: timestamp type %d %d, expected CreateTime %d", where, rec.Attrs.TimestampType(), rec.Timestamp.UnixMilli(), r.o.baseTimestamp+int64(i))
	}
}

func (r *run) expectOffsets(what string, listed kadm.ListedOffsets, err error, want func(p int) int64) {
	if err != nil {
		r.errorf("%s: %v", what, err)
		return
	}
	for p := 0; p < r.o.partitions; p++ {
		lo, ok := listed.Lookup(r.o.topic, int32(p))
		switch {
		case !ok:
			r.errorf("%s partition %d: no answer", what, p)
		case lo.Err != nil:
			r.errorf("%s partition %d: %v", what, p, lo.Err)
		case lo.Offset != want(p):
			r.errorf("%s partition %d: offset %d, expected %d", what, p, lo.Offset, want(p))
		}
	}
}

func (r *run) listOffsets(ctx context.Context) (string, error) {
	l, err := r.adm.ListStartOffsets(ctx, r.o.topic)
	r.expectOffsets("start", l, err, func(int) int64 { return 0 })
	l, err = r.adm.ListEndOffsets(ctx, r.o.topic)
	r.expectOffsets("end", l, err, r.partitionCount)
	samples := map[int]bool{0: true, 1: true, r.o.count / 3: true, r.o.count / 2: true, r.o.count - 1: true}
	idx := make([]int, 0, len(samples))
	for i := range samples {
		if i >= 0 && i < r.o.count {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		l, err = r.adm.ListOffsetsAfterMilli(ctx, r.o.baseTimestamp+int64(i), r.o.topic)
		r.expectOffsets(fmt.Sprintf("after milli %d", r.o.baseTimestamp+int64(i)), l, err, func(p int) int64 {
			// kadm substitutes the end offset where the broker finds no record.
			if o := r.expectedOffsetForTimestamp(i, p); o >= 0 {
				return o
			}
			return r.partitionCount(p)
		})
	}
	l, err = r.adm.ListOffsetsAfterMilli(ctx, r.o.baseTimestamp+int64(r.o.count)+1000, r.o.topic)
	r.expectOffsets("after milli past the end", l, err, r.partitionCount)
	l, err = r.adm.ListMaxTimestampOffsets(ctx, r.o.topic)
	r.expectOffsets("max timestamp", l, err, func(p int) int64 { return r.partitionCount(p) - 1 })
	l, err = r.adm.ListLocalLogStartOffsets(ctx, r.o.topic)
	r.expectOffsets("local log start", l, err, func(int) int64 { return 0 })
	return fmt.Sprintf("start, end, %d timestamps + past the end, max timestamp, local log start", len(idx)), nil
}

func (r *run) groupLag(ctx context.Context) (string, error) {
	lags, err := r.adm.Lag(ctx, r.o.group)
	if err != nil {
		return "", err
	}
	g, ok := lags[r.o.group]
	if !ok {
		return "", fmt.Errorf("group %s not in the lag answer", r.o.group)
	}
	if g.DescribeErr != nil || g.FetchErr != nil {
		return "", fmt.Errorf("describe: %v, fetch: %v", g.DescribeErr, g.FetchErr)
	}
	for p := 0; p < r.o.partitions; p++ {
		ml, ok := g.Lag.Lookup(r.o.topic, int32(p))
		switch {
		case !ok:
			r.errorf("partition %d: no lag", p)
		case ml.Err != nil:
			r.errorf("partition %d: %v", p, ml.Err)
		case ml.Commit.At != r.partitionCount(p) || ml.Lag != 0:
			r.errorf("partition %d: committed %d, lag %d, expected %d and 0", p, ml.Commit.At, ml.Lag, r.partitionCount(p))
		}
	}
	if g.State != "Empty" {
		r.errorf("group state %s after the consumer left, expected Empty", g.State)
	}
	return fmt.Sprintf("total lag %d, group %s (%s)", g.Lag.Total(), g.State, g.Protocol), nil
}

func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/twmb/franz-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	var o options
	var codecs string
	var timeoutMs int64
	flag.StringVar(&o.bootstrap, "bootstrap", "", "broker host:port")
	flag.StringVar(&o.topic, "topic", "", "topic to create")
	flag.StringVar(&o.group, "group", "", "consumer group")
	flag.IntVar(&o.count, "count", 50_000, "records")
	flag.IntVar(&o.partitions, "partitions", 3, "partitions")
	flag.Int64Var(&o.baseTimestamp, "base-timestamp", (time.Now().Unix()-3600)*1000, "CreateTime of record 0 (ms)")
	flag.StringVar(&codecs, "codecs", "none,gzip,snappy,lz4,zstd", "codec slices")
	flag.Int64Var(&timeoutMs, "timeout-ms", 240_000, "consume limit")
	flag.BoolVar(&o.serverSideBalancer, "server-side-balancer", false, "consume with the KIP-848 consumer group protocol")
	flag.Parse()
	if o.bootstrap == "" || o.topic == "" || o.group == "" {
		fmt.Fprintln(os.Stderr, "--bootstrap, --topic and --group are required")
		os.Exit(2)
	}
	o.codecs = strings.Split(codecs, ",")
	o.timeout = time.Duration(timeoutMs) * time.Millisecond
	r := &run{o: o, s: summary{Client: client, ClientVersion: clientVersion(), Codecs: o.codecs, Idempotent: true, Count: o.count, Notes: []string{}, Errors: []string{}}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*o.timeout)
	defer cancel()
	admClient, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap), kgo.ClientID("sediment-compat-franz-go-admin"))
	if err != nil {
		r.errorf("admin client: %v", err)
	} else {
		r.adm = kadm.NewClient(admClient)
		defer admClient.Close()
		r.op("createTopic", func() (string, error) { return r.createTopic(ctx) })
		r.op("describeConfigs", func() (string, error) { return r.describeConfigs(ctx) })
		r.op("produce", func() (string, error) { return r.produce(ctx) })
		r.op("consumeGroup", func() (string, error) { return r.consume(ctx) })
		r.op("listOffsets", func() (string, error) { return r.listOffsets(ctx) })
		r.op("groupLag", func() (string, error) { return r.groupLag(ctx) })
	}
	r.s.OK = r.s.ErrorCount == 0
	out, _ := json.Marshal(r.s)
	fmt.Println(string(out))
	if !r.s.OK {
		os.Exit(1)
	}
}
