package sqs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/queue"
)

// MaxBatch is the most messages one SendMessageBatch (or ReceiveMessage) carries.
const MaxBatch = 10

// sendAttempts bounds the tries of a batch entry SQS failed on its side (SenderFault false).
const sendAttempts = 3

// SendAPI is what a Sender needs of SQS.
type SendAPI interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Sender sends to one queue. It implements queue.Sender.
type Sender struct {
	client SendAPI
	url    string
}

// NewSender returns a sender to the queue at url.
func NewSender(client SendAPI, url string) *Sender { return &Sender{client: client, url: url} }

var _ queue.Sender = (*Sender)(nil)

// Send checks msgs against the port's rules (queue.Check: nothing is sent if one breaks them), then sends
// them in batches of up to 10 messages and MaxMessageSize bytes, SQS's limits on a batch. Delays are
// rounded up to whole seconds. An entry SQS failed on its side is retried; if one still fails, the error
// says how many were not sent, and the others were: a caller that retries the whole Send may send some
// twice, which consumers tolerate anyway (SQS delivers at least once).
func (s *Sender) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	if err := queue.Check(msgs...); err != nil {
		return err
	}
	for _, batch := range batches(msgs) {
		if err := s.sendBatch(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// batches splits msgs into runs of at most MaxBatch messages and MaxMessageSize bytes.
func batches(msgs []queue.Outgoing) [][]queue.Outgoing {
	var out [][]queue.Outgoing
	var cur []queue.Outgoing
	size := 0
	for _, m := range msgs {
		n := queue.Size(m)
		if len(cur) == MaxBatch || (len(cur) > 0 && size+n > queue.MaxMessageSize) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, m)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func (s *Sender) sendBatch(ctx context.Context, batch []queue.Outgoing) error {
	pending := map[string]types.SendMessageBatchRequestEntry{}
	for i, m := range batch {
		id := strconv.Itoa(i)
		pending[id] = entry(id, m)
	}
	var failed []string
	for range sendAttempts {
		entries := slices.Collect(maps.Values(pending))
		out, err := s.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &s.url, Entries: entries})
		if err != nil {
			return fmt.Errorf("sqs: send %d messages to %s: %w", len(entries), s.url, err)
		}
		for _, ok := range out.Successful {
			delete(pending, aws.ToString(ok.Id))
		}
		failed = failed[:0]
		senderFault := false
		for _, f := range out.Failed {
			failed = append(failed, fmt.Sprintf("%s (%s)", aws.ToString(f.Code), aws.ToString(f.Message)))
			senderFault = senderFault || f.SenderFault
		}
		if len(pending) == 0 {
			return nil
		}
		if senderFault { // the request itself is wrong: trying again cannot help
			break
		}
	}
	return fmt.Errorf("sqs: send to %s: %d of %d messages not sent: %s", s.url, len(pending), len(batch), strings.Join(failed, "; "))
}

func entry(id string, m queue.Outgoing) types.SendMessageBatchRequestEntry {
	e := types.SendMessageBatchRequestEntry{
		Id:           aws.String(id),
		MessageBody:  aws.String(string(m.Body)),
		DelaySeconds: seconds(m.Delay),
	}
	if len(m.Attributes) > 0 {
		e.MessageAttributes = make(map[string]types.MessageAttributeValue, len(m.Attributes))
		for k, v := range m.Attributes {
			e.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	return e
}

// seconds rounds d up to whole seconds, the unit of SQS's delays and visibility timeouts: a message never
// comes back earlier than asked.
func seconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	return int32((d + time.Second - 1) / time.Second)
}
