// A service (package micro): endpoints in a group, an error reply, and
// the service's INFO, PING and STATS.
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	svc, err := micro.AddService(nc, micro.Config{
		Name:        "minmax",
		Version:     "0.0.1",
		Description: "min and max of a list",
	})
	if err != nil {
		log.Fatal(err)
	}
	numbers := func(req micro.Request) ([]int, bool) {
		var out []int
		for _, f := range strings.Fields(string(req.Data())) {
			n, err := strconv.Atoi(f)
			if err != nil {
				req.Error("400", "not a number: "+f, nil)
				return nil, false
			}
			out = append(out, n)
		}
		sort.Ints(out)
		return out, len(out) > 0
	}
	g := svc.AddGroup("minmax")
	g.AddEndpoint("min", micro.HandlerFunc(func(req micro.Request) {
		if ns, ok := numbers(req); ok {
			req.Respond([]byte(strconv.Itoa(ns[0])))
		}
	}))
	g.AddEndpoint("max", micro.HandlerFunc(func(req micro.Request) {
		if ns, ok := numbers(req); ok {
			req.RespondJSON(map[string]int{"max": ns[len(ns)-1]})
		}
	}), micro.WithEndpointMetadata(map[string]string{"format": "json"}))

	for _, q := range []struct{ subject, data string }{
		{"minmax.min", "5 3 9"}, {"minmax.max", "5 3 9"}, {"minmax.min", "5 x"},
	} {
		reply, err := nc.Request(q.subject, []byte(q.data), time.Second)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %q -> %q error=%q code=%q\n", q.subject, q.data, reply.Data,
			reply.Header.Get(micro.ErrorHeader), reply.Header.Get(micro.ErrorCodeHeader))
	}

	info := svc.Info()
	fmt.Println("info:", info.Name, info.Version, info.Description, len(info.Endpoints))
	for _, e := range info.Endpoints {
		fmt.Println(" endpoint:", e.Name, e.Subject, e.QueueGroup, e.Metadata)
	}
	reply, err := nc.Request("$SRV.PING.minmax", nil, time.Second)
	if err != nil {
		log.Fatal(err)
	}
	var ping micro.Ping
	json.Unmarshal(reply.Data, &ping)
	fmt.Println("ping:", ping.Name, ping.Version, ping.Type, ping.ID == info.ID)

	stats := svc.Stats()
	for _, e := range stats.Endpoints {
		fmt.Println(" stats:", e.Name, e.NumRequests, e.NumErrors, e.LastError)
	}
	fmt.Println("stop:", svc.Stop(), svc.Stopped())
	_, err = nc.Request("minmax.min", []byte("1"), 200*time.Millisecond)
	fmt.Println("after stop:", err)
}
