// A franz-go (kgo) share-group consumer (KIP-932) for the share-group
// end-to-end suite, built by the test from this module (franz-go v1.22.3, as
// test/compat/franz-go pins it). Run as
//   share-franz <bootstrap> <group> <topic> <count> <accept|renew>
// It sets share.auto.offset.reset=earliest on the group
// (IncrementalAlterConfigs on the GROUP resource), then polls until <count>
// distinct records have been delivered, acknowledging each with Accept; in
// "renew" mode each record is first renewed (AckRenew, ShareAcknowledge v2),
// the renewal flushed, then accepted. stdout, one JSON object a line:
//   {"ev":"rec","p":0,"o":12,"v":"...","dc":1}   {"ev":"done","n":N}   {"ev":"error","error":"..."}
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func fail(err error) {
	emit(map[string]any{"ev": "error", "error": err.Error()})
	os.Exit(1)
}

func main() {
	bootstrap, group, topic := os.Args[1], os.Args[2], os.Args[3]
	count, _ := strconv.Atoi(os.Args[4])
	renew := os.Args[5] == "renew"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		fail(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceType(32) // GROUP
	res.ResourceName = group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "share.auto.offset.reset"
	v := "earliest"
	cfg.Value = &v
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, admin)
	if err != nil {
		fail(err)
	}
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		fail(fmt.Errorf("IncrementalAlterConfigs on the group failed: %+v", resp.Resources))
	}
	admin.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ShareGroup(group), kgo.ConsumeTopics(topic))
	if err != nil {
		fail(err)
	}
	seen := map[string]bool{}
	for len(seen) < count {
		fetches := cl.PollRecords(ctx, 100)
		if ctx.Err() != nil {
			fail(fmt.Errorf("timed out with %d of %d records", len(seen), count))
		}
		for _, e := range fetches.Errors() {
			emit(map[string]any{"ev": "fetch-error", "error": e.Err.Error()})
		}
		records := fetches.Records()
		for _, r := range records {
			emit(map[string]any{"ev": "rec", "p": r.Partition, "o": r.Offset, "v": string(r.Value), "dc": r.DeliveryCount()})
			seen[string(r.Value)] = true
			if renew {
				r.Ack(kgo.AckRenew)
			}
		}
		if renew && len(records) > 0 {
			if err := cl.FlushAcks(ctx); err != nil {
				fail(err)
			}
		}
		for _, r := range records {
			r.Ack(kgo.AckAccept)
		}
		if err := cl.FlushAcks(ctx); err != nil {
			fail(err)
		}
	}
	cl.Close()
	emit(map[string]any{"ev": "done", "n": len(seen)})
}
