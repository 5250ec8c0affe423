// The scenario through the AWS SDK for Go v2, compiled against three releases of it: Debian's
// (service/sqs 1.19.12, Query; v2_debian.go), and two from the Go module proxy (v2_modproxy.go):
// the current one (JSON; go.mod) and the last that spoke Query (service/sqs 1.26.0; query.mod).
// The SDK checks body MD5s of SendMessage, SendMessageBatch and ReceiveMessage itself, in
// cust_checksum_validation.go; attribute MD5s are checked here.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

func init() {
	scenarios["v2"] = func(endpoint, prefix, protocol string, httpClient *http.Client, r *runner) []namedStep {
		s := newV2(endpoint, prefix, httpClient, r)
		s.json = protocol == "json"
		return s.steps()
	}
	versions["v2"] = func() string {
		return "aws-sdk-go-v2 " + aws.SDKVersion + " (service/sqs " + v2SqsModuleVersion() + ")"
	}
}

type v2Scenario struct {
	sqs       *sqs.Client
	ctx       context.Context
	prefix    string
	r         *runner
	std, fifo string
	dlq, src  string // the dead-letter step's queues
	// json: the SDK speaks AWS JSON 1.0, whose SQS model lists QueueDoesNotExist for every
	// operation on a queue URL (the Query-era model: GetQueueUrl, ListDeadLetterSourceQueues and
	// PurgeQueue only).
	json bool
}

func newV2(endpoint, prefix string, httpClient *http.Client, r *runner) *v2Scenario {
	return &v2Scenario{sqs: newV2Client(endpoint, httpClient), ctx: context.Background(), prefix: prefix, r: r}
}

func (s *v2Scenario) steps() []namedStep {
	return []namedStep{
		{"create queues", s.createQueues},
		{"send/receive attributes", s.sendReceiveAttributes},
		{"batch send/delete/visibility", s.batches},
		{"long poll woken by send", s.longPoll},
		{"change visibility", s.changeVisibility},
		{"fifo order + dedup", s.fifoOrder},
		{"dead-letter redrive", s.deadLetterQueue},
		{"tags", s.tags},
		{"purge", s.purge},
		{"queue attributes", s.queueAttributes},
		{"missing queue error", s.missingQueue},
		{"delete queues", s.deleteQueues},
	}
}

func names(ns ...string) []types.QueueAttributeName {
	out := make([]types.QueueAttributeName, len(ns))
	for i, n := range ns {
		out[i] = types.QueueAttributeName(n)
	}
	return out
}

func (s *v2Scenario) queue(suffix string, attrs map[string]string) string {
	out, err := s.sqs.CreateQueue(s.ctx, &sqs.CreateQueueInput{QueueName: aws.String(s.prefix + "-" + suffix),
		Attributes: attrs})
	must(err, "CreateQueue "+suffix)
	return aws.ToString(out.QueueUrl)
}

func (s *v2Scenario) receive(url string, in sqs.ReceiveMessageInput) []types.Message {
	in.QueueUrl = aws.String(url)
	if in.MaxNumberOfMessages == 0 {
		in.MaxNumberOfMessages = 10
	}
	out, err := s.sqs.ReceiveMessage(s.ctx, &in)
	must(err, "ReceiveMessage")
	return out.Messages
}

func (s *v2Scenario) del(url string, m types.Message) {
	_, err := s.sqs.DeleteMessage(s.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url),
		ReceiptHandle: m.ReceiptHandle})
	must(err, "DeleteMessage")
}

func (s *v2Scenario) send(url, body string) *sqs.SendMessageOutput {
	out, err := s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)})
	must(err, "SendMessage")
	return out
}

func v2Attrs(in map[string]attr) map[string]types.MessageAttributeValue {
	out := map[string]types.MessageAttributeValue{}
	for k, a := range in {
		v := types.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if a.BinaryValue != nil {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[k] = v
	}
	return out
}

func fromV2Attrs(in map[string]types.MessageAttributeValue) map[string]attr {
	out := map[string]attr{}
	for k, v := range in {
		out[k] = attr{DataType: aws.ToString(v.DataType), StringValue: aws.ToString(v.StringValue),
			BinaryValue: v.BinaryValue}
	}
	return out
}

func (s *v2Scenario) createQueues() {
	s.std = s.queue("std", nil)
	s.fifo = s.queue("fifo.fifo", map[string]string{"FifoQueue": "true"})
	check(strings.HasSuffix(s.std, "/000000000000/"+s.prefix+"-std"), "queue URL %s", s.std)
	check(strings.HasSuffix(s.fifo, ".fifo"), "fifo URL %s", s.fifo)
	out, err := s.sqs.ListQueues(s.ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(s.prefix)})
	must(err, "ListQueues")
	urls := append([]string(nil), out.QueueUrls...)
	sort.Strings(urls)
	want := []string{s.fifo, s.std}
	sort.Strings(want)
	check(fmt.Sprint(urls) == fmt.Sprint(want), "ListQueues %v, want %v", urls, want)
	check(s.queue("std", nil) == s.std, "CreateQueue again returned another URL")
}

func (s *v2Scenario) sendReceiveAttributes() {
	sent, err := s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.std),
		MessageBody: aws.String(scenarioBody), MessageAttributes: v2Attrs(scenarioAttrs)})
	must(err, "SendMessage")
	check(aws.ToString(sent.MD5OfMessageBody) == md5Hex([]byte(scenarioBody)), "MD5OfMessageBody %v", sent)
	check(aws.ToString(sent.MD5OfMessageAttributes) == md5OfAttributes(scenarioAttrs),
		"MD5OfMessageAttributes %s, want %s", aws.ToString(sent.MD5OfMessageAttributes),
		md5OfAttributes(scenarioAttrs))
	msgs := s.receive(s.std, sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"},
		AttributeNames: names("All"), WaitTimeSeconds: 2})
	check(len(msgs) == 1, "received %d messages: %v", len(msgs), msgs)
	m := msgs[0]
	check(aws.ToString(m.MessageId) == aws.ToString(sent.MessageId), "MessageId %v", m)
	check(aws.ToString(m.Body) == scenarioBody, "Body %q", aws.ToString(m.Body))
	got := fromV2Attrs(m.MessageAttributes)
	check(attrsEqual(got, scenarioAttrs), "MessageAttributes %#v", got)
	check(aws.ToString(m.MD5OfMessageAttributes) == md5OfAttributes(got), "MD5OfMessageAttributes %v", m)
	check(m.Attributes["ApproximateReceiveCount"] == "1", "attributes %v", m.Attributes)
	for _, k := range []string{"SentTimestamp", "ApproximateFirstReceiveTimestamp", "SenderId"} {
		_, ok := m.Attributes[k]
		check(ok, "attribute %s missing: %v", k, m.Attributes)
	}
	s.del(s.std, m)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "queue not empty after delete")
}

func (s *v2Scenario) batches() {
	numAttr := map[string]attr{"n": {DataType: "Number", StringValue: "7"}}
	entries := []types.SendMessageBatchRequestEntry{}
	for i := 0; i < 3; i++ {
		e := types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("m%d", i)),
			MessageBody: aws.String(fmt.Sprintf("batch-%d", i))}
		if i == 0 {
			e.MessageAttributes = v2Attrs(numAttr)
		}
		entries = append(entries, e)
	}
	res, err := s.sqs.SendMessageBatch(s.ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.std), Entries: entries})
	must(err, "SendMessageBatch")
	check(len(res.Failed) == 0 && len(res.Successful) == 3, "SendMessageBatch %v", res)
	for _, e := range res.Successful {
		i := strings.TrimPrefix(aws.ToString(e.Id), "m")
		check(aws.ToString(e.MD5OfMessageBody) == md5Hex([]byte("batch-"+i)), "entry %v", e)
		if i == "0" {
			check(aws.ToString(e.MD5OfMessageAttributes) == md5OfAttributes(numAttr), "entry %v", e)
		}
	}
	got := map[string]types.Message{}
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 3 && time.Now().Before(deadline) {
		for _, m := range s.receive(s.std, sqs.ReceiveMessageInput{WaitTimeSeconds: 1}) {
			got[aws.ToString(m.Body)] = m
		}
	}
	check(len(got) == 3, "received %d of the 3 batch messages", len(got))
	handles := []*string{}
	for i := 0; i < 3; i++ {
		handles = append(handles, got[fmt.Sprintf("batch-%d", i)].ReceiptHandle)
	}
	bad := aws.String("not-a-receipt-handle")
	cv, err := s.sqs.ChangeMessageVisibilityBatch(s.ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(s.std), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("ok"), ReceiptHandle: handles[0], VisibilityTimeout: 60},
			{Id: aws.String("bad"), ReceiptHandle: bad, VisibilityTimeout: 60},
		}})
	must(err, "ChangeMessageVisibilityBatch")
	check(len(cv.Successful) == 1 && aws.ToString(cv.Successful[0].Id) == "ok", "%v", cv)
	check(len(cv.Failed) == 1 && aws.ToString(cv.Failed[0].Id) == "bad", "%v", cv)
	check(aws.ToString(cv.Failed[0].Code) == "ReceiptHandleIsInvalid", "%v", cv.Failed)
	check(cv.Failed[0].SenderFault, "SenderFault %v", cv.Failed)

	dels := []types.DeleteMessageBatchRequestEntry{}
	for i, h := range handles {
		dels = append(dels, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("d%d", i)), ReceiptHandle: h})
	}
	dels = append(dels, types.DeleteMessageBatchRequestEntry{Id: aws.String("bad"), ReceiptHandle: bad})
	dr, err := s.sqs.DeleteMessageBatch(s.ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.std), Entries: dels})
	must(err, "DeleteMessageBatch")
	ids := []string{}
	for _, e := range dr.Successful {
		ids = append(ids, aws.ToString(e.Id))
	}
	sort.Strings(ids)
	check(fmt.Sprint(ids) == "[d0 d1 d2]", "DeleteMessageBatch successful %v", ids)
	check(len(dr.Failed) == 1 && aws.ToString(dr.Failed[0].Id) == "bad", "%v", dr)
	check(aws.ToString(dr.Failed[0].Code) == "ReceiptHandleIsInvalid", "%v", dr.Failed)
	check(dr.Failed[0].SenderFault, "SenderFault %v", dr.Failed)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "queue not empty")
}

func (s *v2Scenario) longPoll() {
	var wg sync.WaitGroup
	var msgs []types.Message
	var elapsed time.Duration
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t0 := time.Now()
		out, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.std),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 10})
		elapsed, perr = time.Since(t0), err
		if err == nil {
			msgs = out.Messages
		}
	}()
	time.Sleep(500 * time.Millisecond)
	s.send(s.std, "wake-up")
	wg.Wait()
	must(perr, "long-poll ReceiveMessage")
	check(len(msgs) == 1 && aws.ToString(msgs[0].Body) == "wake-up", "long poll got %v", msgs)
	check(elapsed > 300*time.Millisecond && elapsed < 5*time.Second, "long poll returned after %v", elapsed)
	fmt.Printf("       long poll woke after %.2fs\n", elapsed.Seconds())
	s.del(s.std, msgs[0])
}

func (s *v2Scenario) changeVisibility() {
	s.send(s.std, "vis")
	first := s.receive(s.std, sqs.ReceiveMessageInput{VisibilityTimeout: 30})
	check(len(first) == 1 && aws.ToString(first[0].Body) == "vis", "first receive %v", first)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "message visible during its visibility timeout")
	_, err := s.sqs.ChangeMessageVisibility(s.ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(s.std),
		ReceiptHandle: first[0].ReceiptHandle, VisibilityTimeout: 0})
	must(err, "ChangeMessageVisibility")
	again := s.receive(s.std, sqs.ReceiveMessageInput{AttributeNames: names("ApproximateReceiveCount")})
	check(len(again) == 1 && aws.ToString(again[0].MessageId) == aws.ToString(first[0].MessageId),
		"after ChangeMessageVisibility 0: %v", again)
	check(again[0].Attributes["ApproximateReceiveCount"] == "2", "%v", again[0].Attributes)
	s.del(s.std, again[0])
}

func (s *v2Scenario) fifoOrder() {
	var seqs []string
	for i, dedup := range []string{"d1", "d2", "d1", "d3"} {
		out, err := s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.fifo),
			MessageBody: aws.String(fmt.Sprintf("f-%d", i)), MessageGroupId: aws.String("g1"),
			MessageDeduplicationId: aws.String(dedup)})
		must(err, "SendMessage fifo")
		if i != 2 {
			check(aws.ToString(out.SequenceNumber) != "", "no SequenceNumber: %v", out)
			seqs = append(seqs, aws.ToString(out.SequenceNumber))
		}
	}
	check(len(seqs) == 3 && seqs[0] != seqs[1] && seqs[1] != seqs[2], "sequence numbers %v", seqs)
	var bodies []string
	for i := 0; i < 10; i++ {
		msgs := s.receive(s.fifo, sqs.ReceiveMessageInput{AttributeNames: names("All")})
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			check(m.Attributes["MessageGroupId"] == "g1", "%v", m.Attributes)
			bodies = append(bodies, aws.ToString(m.Body))
			s.del(s.fifo, m)
		}
	}
	check(fmt.Sprint(bodies) == "[f-0 f-1 f-3]", "fifo bodies %v", bodies)
}

func (s *v2Scenario) arn(url string) string {
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: names("QueueArn")})
	must(err, "GetQueueAttributes QueueArn")
	return out.Attributes["QueueArn"]
}

// deadLetterQueue: maxReceiveCount 1 and VisibilityTimeout 0, so the second receive moves the
// message; it arrives in the DLQ with its MessageId, and ListDeadLetterSourceQueues names the
// source (python/boto3_scenario.py's step).
func (s *v2Scenario) deadLetterQueue() {
	s.dlq = s.queue("dlq", nil)
	policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":1}`, s.arn(s.dlq))
	s.src = s.queue("src", map[string]string{"VisibilityTimeout": "0", "RedrivePolicy": policy})
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.src),
		AttributeNames: names("RedrivePolicy")})
	must(err, "GetQueueAttributes RedrivePolicy")
	var rp struct {
		Target string      `json:"deadLetterTargetArn"`
		Max    json.Number `json:"maxReceiveCount"`
	}
	must(json.Unmarshal([]byte(out.Attributes["RedrivePolicy"]), &rp), "RedrivePolicy JSON")
	check(rp.Target == s.arn(s.dlq) && rp.Max.String() == "1", "RedrivePolicy %s", out.Attributes["RedrivePolicy"])
	sent := s.send(s.src, "poison")
	first := s.receive(s.src, sqs.ReceiveMessageInput{})
	check(len(first) == 1 && aws.ToString(first[0].Body) == "poison", "first receive %v", first)
	second := s.receive(s.src, sqs.ReceiveMessageInput{})
	check(len(second) == 0, "second receive should have moved the message: %v", second)
	moved := s.receive(s.dlq, sqs.ReceiveMessageInput{WaitTimeSeconds: 2})
	check(len(moved) == 1 && aws.ToString(moved[0].MessageId) == aws.ToString(sent.MessageId),
		"dead-letter queue %v", moved)
	sources, err := s.sqs.ListDeadLetterSourceQueues(s.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(s.dlq)})
	must(err, "ListDeadLetterSourceQueues")
	check(fmt.Sprint(sources.QueueUrls) == fmt.Sprint([]string{s.src}), "sources %v", sources.QueueUrls)
}

func (s *v2Scenario) tags() {
	_, err := s.sqs.TagQueue(s.ctx, &sqs.TagQueueInput{QueueUrl: aws.String(s.std),
		Tags: map[string]string{"env": "test", "team": "core"}})
	must(err, "TagQueue")
	out, err := s.sqs.ListQueueTags(s.ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(s.std)})
	must(err, "ListQueueTags")
	check(len(out.Tags) == 2 && out.Tags["env"] == "test" && out.Tags["team"] == "core", "tags %v", out.Tags)
	_, err = s.sqs.UntagQueue(s.ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(s.std), TagKeys: []string{"team"}})
	must(err, "UntagQueue")
	out, err = s.sqs.ListQueueTags(s.ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(s.std)})
	must(err, "ListQueueTags")
	check(len(out.Tags) == 1 && out.Tags["env"] == "test", "tags after untag %v", out.Tags)
}

func (s *v2Scenario) purge() {
	for i := 0; i < 3; i++ {
		s.send(s.std, fmt.Sprintf("purge-%d", i))
	}
	_, err := s.sqs.PurgeQueue(s.ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(s.std)})
	must(err, "PurgeQueue")
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "messages left after purge")
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: names("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")})
	must(err, "GetQueueAttributes")
	got := out.Attributes
	check(len(got) == 2 && got["ApproximateNumberOfMessages"] == "0" &&
		got["ApproximateNumberOfMessagesNotVisible"] == "0", "after purge %v", got)
}

func (s *v2Scenario) queueAttributes() {
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: names("All")})
	must(err, "GetQueueAttributes All")
	attrs := out.Attributes
	for _, k := range []string{"QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds",
		"MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout"} {
		_, ok := attrs[k]
		check(ok, "attribute %s missing: %v", k, attrs)
	}
	check(attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:"+s.prefix+"-std", "QueueArn %s", attrs["QueueArn"])
	check(attrs["VisibilityTimeout"] == "30", "VisibilityTimeout %s", attrs["VisibilityTimeout"])
	_, err = s.sqs.SetQueueAttributes(s.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(s.std),
		Attributes: map[string]string{"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600"}})
	must(err, "SetQueueAttributes")
	out, err = s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: names("VisibilityTimeout", "MessageRetentionPeriod")})
	must(err, "GetQueueAttributes")
	attrs = out.Attributes
	check(len(attrs) == 2 && attrs["VisibilityTimeout"] == "45" && attrs["MessageRetentionPeriod"] == "3600",
		"after SetQueueAttributes %v", attrs)
	out, err = s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.fifo),
		AttributeNames: names("All")})
	must(err, "GetQueueAttributes fifo")
	attrs = out.Attributes
	check(attrs["FifoQueue"] == "true" && attrs["ContentBasedDeduplication"] == "false", "fifo %v", attrs)
}

// v2CheckMissing: the code through smithy.APIError, HTTP 400 and, for the operations whose
// model lists it (in the Query-era SDKs GetQueueUrl, ListDeadLetterSourceQueues and PurgeQueue,
// not SendMessage or GetQueueAttributes; in the JSON ones all of them), the modeled
// *types.QueueDoesNotExist. (The Query deserializer of 1.19 drops the message of modeled
// errors, so only the generic error carries the text.)
func v2CheckMissing(err error, what string, modeled bool) {
	check(err != nil, "%s of a missing queue succeeded", what)
	if modeled {
		var qdne *types.QueueDoesNotExist
		check(errors.As(err, &qdne), "%s: error is not a *types.QueueDoesNotExist: %T %v", what, err, err)
	}
	var apiErr smithy.APIError
	check(errors.As(err, &apiErr) && apiErr.ErrorCode() == nonExistent, "%s: code %v", what, err)
	var resp *awshttp.ResponseError
	check(errors.As(err, &resp) && resp.HTTPStatusCode() == 400, "%s: HTTP status of %v", what, err)
	check(resp.ServiceRequestID() != "", "%s: no request id", what)
}

func (s *v2Scenario) missingQueue() {
	_, err := s.sqs.GetQueueUrl(s.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(s.prefix + "-does-not-exist")})
	v2CheckMissing(err, "GetQueueUrl", true)
	fmt.Printf("       caught *types.QueueDoesNotExist: %v\n", err)
	_, err = s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(strings.Replace(s.std, "-std", "-nope", 1)),
		MessageBody: aws.String("x")})
	v2CheckMissing(err, "SendMessage", s.json)
}

func (s *v2Scenario) deleteQueues() {
	for _, u := range []string{s.std, s.fifo, s.dlq, s.src} {
		if u == "" {
			continue
		}
		_, err := s.sqs.DeleteQueue(s.ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		must(err, "DeleteQueue")
	}
	out, err := s.sqs.ListQueues(s.ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(s.prefix)})
	must(err, "ListQueues")
	check(len(out.QueueUrls) == 0, "queues left: %v", out.QueueUrls)
	_, err = s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: names("All")})
	v2CheckMissing(err, "GetQueueAttributes of a deleted queue", s.json)
}
