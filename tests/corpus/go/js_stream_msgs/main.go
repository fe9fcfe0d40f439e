// Reading, deleting and purging a stream's messages directly.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SENSORS", Subjects: []string{"sensor.*"}})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		m := nats.NewMsg(fmt.Sprintf("sensor.%c", 'a'+i%3))
		m.Header.Set("Reading", fmt.Sprint(i))
		m.Data = []byte(fmt.Sprintf("%d degrees", 20+i))
		js.PublishMsg(ctx, m)
	}
	m, err := s.GetMsg(ctx, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("seq 2:", m.Subject, string(m.Data), m.Header.Get("Reading"), m.Sequence)
	m, _ = s.GetLastMsgForSubject(ctx, "sensor.b")
	fmt.Println("last b:", m.Sequence, string(m.Data))
	_, err = s.GetMsg(ctx, 99)
	fmt.Println("missing:", err, errors.Is(err, jetstream.ErrMsgNotFound))

	fmt.Println("delete 1:", s.DeleteMsg(ctx, 1))
	info, _ := s.Info(ctx)
	fmt.Println("after delete:", info.State.Msgs, info.State.FirstSeq, info.State.NumDeleted)

	info, _ = s.Info(ctx, jetstream.WithSubjectFilter("sensor.*"))
	fmt.Println("subjects:", info.State.Subjects)

	fmt.Println("purge a:", s.Purge(ctx, jetstream.WithPurgeSubject("sensor.a")))
	info, _ = s.Info(ctx)
	fmt.Println("after purge a:", info.State.Msgs)
	fmt.Println("purge keep 1:", s.Purge(ctx, jetstream.WithPurgeKeep(1)))
	info, _ = s.Info(ctx)
	fmt.Println("after keep:", info.State.Msgs, info.State.LastSeq)
	fmt.Println("purge:", s.Purge(ctx))
	info, _ = s.Info(ctx)
	fmt.Println("after purge:", info.State.Msgs, info.State.FirstSeq)
}
