//go:build !modproxy

// The scenario through the AWS SDK for Go v1 (Query protocol; the SDK checks body MD5s of
// SendMessage, SendMessageBatch and ReceiveMessage itself). Debian's build only: the module
// builds (-tags modproxy) carry the v2 SDK alone.
package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go/aws"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/credentials"
	"github.com/aws/aws-sdk-go/aws/session"
	"github.com/aws/aws-sdk-go/service/sqs"
)

func init() {
	scenarios["v1"] = func(endpoint, prefix, _ string, httpClient *http.Client, r *runner) []namedStep {
		return newV1(endpoint, prefix, httpClient, r).steps()
	}
	versions["v1"] = func() string { return "aws-sdk-go " + aws.SDKVersion }
}

type v1Scenario struct {
	sqs       *sqs.SQS
	prefix    string
	r         *runner
	std, fifo string
}

func newV1(endpoint, prefix string, httpClient *http.Client, r *runner) *v1Scenario {
	sess := session.Must(session.NewSessionWithOptions(session.Options{
		SharedConfigState: session.SharedConfigDisable,
		Config: aws.Config{
			Region:      aws.String("us-east-1"),
			Endpoint:    aws.String(endpoint),
			Credentials: credentials.NewStaticCredentials("test", "test", ""),
			HTTPClient:  httpClient,
			MaxRetries:  aws.Int(0),
		},
	}))
	return &v1Scenario{sqs: sqs.New(sess), prefix: prefix, r: r}
}

func (s *v1Scenario) steps() []namedStep {
	return []namedStep{
		{"create queues", s.createQueues},
		{"send/receive attributes", s.sendReceiveAttributes},
		{"batch send/delete/visibility", s.batches},
		{"long poll woken by send", s.longPoll},
		{"change visibility", s.changeVisibility},
		{"fifo order + dedup", s.fifoOrder},
		{"tags", s.tags},
		{"purge", s.purge},
		{"queue attributes", s.queueAttributes},
		{"missing queue error", s.missingQueue},
		{"delete queues", s.deleteQueues},
	}
}

func (s *v1Scenario) queue(suffix string, attrs map[string]string) string {
	in := &sqs.CreateQueueInput{QueueName: aws.String(s.prefix + "-" + suffix)}
	if len(attrs) > 0 {
		in.Attributes = aws.StringMap(attrs)
	}
	out, err := s.sqs.CreateQueue(in)
	must(err, "CreateQueue "+suffix)
	return aws.StringValue(out.QueueUrl)
}

func (s *v1Scenario) receive(url string, in sqs.ReceiveMessageInput) []*sqs.Message {
	in.QueueUrl = aws.String(url)
	if in.MaxNumberOfMessages == nil {
		in.MaxNumberOfMessages = aws.Int64(10)
	}
	if in.WaitTimeSeconds == nil {
		in.WaitTimeSeconds = aws.Int64(0)
	}
	out, err := s.sqs.ReceiveMessage(&in)
	must(err, "ReceiveMessage")
	return out.Messages
}

func (s *v1Scenario) del(url string, m *sqs.Message) {
	_, err := s.sqs.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: aws.String(url),
		ReceiptHandle: m.ReceiptHandle})
	must(err, "DeleteMessage")
}

func v1Attrs(in map[string]attr) map[string]*sqs.MessageAttributeValue {
	out := map[string]*sqs.MessageAttributeValue{}
	for k, a := range in {
		v := &sqs.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if a.BinaryValue != nil {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[k] = v
	}
	return out
}

func fromV1Attrs(in map[string]*sqs.MessageAttributeValue) map[string]attr {
	out := map[string]attr{}
	for k, v := range in {
		out[k] = attr{DataType: aws.StringValue(v.DataType), StringValue: aws.StringValue(v.StringValue),
			BinaryValue: v.BinaryValue}
	}
	return out
}

func (s *v1Scenario) createQueues() {
	s.std = s.queue("std", nil)
	s.fifo = s.queue("fifo.fifo", map[string]string{"FifoQueue": "true"})
	check(strings.HasSuffix(s.std, "/000000000000/"+s.prefix+"-std"), "queue URL %s", s.std)
	check(strings.HasSuffix(s.fifo, ".fifo"), "fifo URL %s", s.fifo)
	out, err := s.sqs.ListQueues(&sqs.ListQueuesInput{QueueNamePrefix: aws.String(s.prefix)})
	must(err, "ListQueues")
	urls := aws.StringValueSlice(out.QueueUrls)
	sort.Strings(urls)
	want := []string{s.fifo, s.std}
	sort.Strings(want)
	check(fmt.Sprint(urls) == fmt.Sprint(want), "ListQueues %v, want %v", urls, want)
	check(s.queue("std", nil) == s.std, "CreateQueue again returned another URL")
}

func (s *v1Scenario) sendReceiveAttributes() {
	sent, err := s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(s.std),
		MessageBody: aws.String(scenarioBody), MessageAttributes: v1Attrs(scenarioAttrs)})
	must(err, "SendMessage")
	check(aws.StringValue(sent.MD5OfMessageBody) == md5Hex([]byte(scenarioBody)), "MD5OfMessageBody %v", sent)
	check(aws.StringValue(sent.MD5OfMessageAttributes) == md5OfAttributes(scenarioAttrs),
		"MD5OfMessageAttributes %s, want %s", aws.StringValue(sent.MD5OfMessageAttributes),
		md5OfAttributes(scenarioAttrs))
	msgs := s.receive(s.std, sqs.ReceiveMessageInput{MessageAttributeNames: aws.StringSlice([]string{"All"}),
		AttributeNames: aws.StringSlice([]string{"All"}), WaitTimeSeconds: aws.Int64(2)})
	check(len(msgs) == 1, "received %d messages: %v", len(msgs), msgs)
	m := msgs[0]
	check(aws.StringValue(m.MessageId) == aws.StringValue(sent.MessageId), "MessageId %v", m)
	check(aws.StringValue(m.Body) == scenarioBody, "Body %q", aws.StringValue(m.Body))
	got := fromV1Attrs(m.MessageAttributes)
	check(attrsEqual(got, scenarioAttrs), "MessageAttributes %#v", got)
	check(aws.StringValue(m.MD5OfMessageAttributes) == md5OfAttributes(got), "MD5OfMessageAttributes %v", m)
	check(aws.StringValue(m.Attributes["ApproximateReceiveCount"]) == "1", "attributes %v", m.Attributes)
	for _, k := range []string{"SentTimestamp", "ApproximateFirstReceiveTimestamp", "SenderId"} {
		check(m.Attributes[k] != nil, "attribute %s missing: %v", k, m.Attributes)
	}
	s.del(s.std, m)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "queue not empty after delete")
}

func (s *v1Scenario) batches() {
	numAttr := map[string]attr{"n": {DataType: "Number", StringValue: "7"}}
	entries := []*sqs.SendMessageBatchRequestEntry{}
	for i := 0; i < 3; i++ {
		e := &sqs.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("m%d", i)),
			MessageBody: aws.String(fmt.Sprintf("batch-%d", i))}
		if i == 0 {
			e.MessageAttributes = v1Attrs(numAttr)
		}
		entries = append(entries, e)
	}
	res, err := s.sqs.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: aws.String(s.std), Entries: entries})
	must(err, "SendMessageBatch")
	check(len(res.Failed) == 0 && len(res.Successful) == 3, "SendMessageBatch %v", res)
	for _, e := range res.Successful {
		i := strings.TrimPrefix(aws.StringValue(e.Id), "m")
		check(aws.StringValue(e.MD5OfMessageBody) == md5Hex([]byte("batch-"+i)), "entry %v", e)
		if i == "0" {
			check(aws.StringValue(e.MD5OfMessageAttributes) == md5OfAttributes(numAttr), "entry %v", e)
		}
	}
	got := map[string]*sqs.Message{}
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 3 && time.Now().Before(deadline) {
		for _, m := range s.receive(s.std, sqs.ReceiveMessageInput{WaitTimeSeconds: aws.Int64(1)}) {
			got[aws.StringValue(m.Body)] = m
		}
	}
	check(len(got) == 3, "received %d of the 3 batch messages", len(got))
	handles := []*string{}
	for i := 0; i < 3; i++ {
		handles = append(handles, got[fmt.Sprintf("batch-%d", i)].ReceiptHandle)
	}
	bad := aws.String("not-a-receipt-handle")
	cv, err := s.sqs.ChangeMessageVisibilityBatch(&sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(s.std), Entries: []*sqs.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("ok"), ReceiptHandle: handles[0], VisibilityTimeout: aws.Int64(60)},
			{Id: aws.String("bad"), ReceiptHandle: bad, VisibilityTimeout: aws.Int64(60)},
		}})
	must(err, "ChangeMessageVisibilityBatch")
	check(len(cv.Successful) == 1 && aws.StringValue(cv.Successful[0].Id) == "ok", "%v", cv)
	check(len(cv.Failed) == 1 && aws.StringValue(cv.Failed[0].Id) == "bad", "%v", cv)
	check(aws.StringValue(cv.Failed[0].Code) == "ReceiptHandleIsInvalid", "%v", cv.Failed)
	check(aws.BoolValue(cv.Failed[0].SenderFault), "SenderFault %v", cv.Failed)

	dels := []*sqs.DeleteMessageBatchRequestEntry{}
	for i, h := range handles {
		dels = append(dels, &sqs.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("d%d", i)), ReceiptHandle: h})
	}
	dels = append(dels, &sqs.DeleteMessageBatchRequestEntry{Id: aws.String("bad"), ReceiptHandle: bad})
	dr, err := s.sqs.DeleteMessageBatch(&sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.std), Entries: dels})
	must(err, "DeleteMessageBatch")
	ids := []string{}
	for _, e := range dr.Successful {
		ids = append(ids, aws.StringValue(e.Id))
	}
	sort.Strings(ids)
	check(fmt.Sprint(ids) == "[d0 d1 d2]", "DeleteMessageBatch successful %v", ids)
	check(len(dr.Failed) == 1 && aws.StringValue(dr.Failed[0].Id) == "bad", "%v", dr)
	check(aws.StringValue(dr.Failed[0].Code) == "ReceiptHandleIsInvalid", "%v", dr.Failed)
	check(aws.BoolValue(dr.Failed[0].SenderFault), "SenderFault %v", dr.Failed)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "queue not empty")
}

func (s *v1Scenario) longPoll() {
	var wg sync.WaitGroup
	var msgs []*sqs.Message
	var elapsed time.Duration
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t0 := time.Now()
		out, err := s.sqs.ReceiveMessage(&sqs.ReceiveMessageInput{QueueUrl: aws.String(s.std),
			MaxNumberOfMessages: aws.Int64(10), WaitTimeSeconds: aws.Int64(10)})
		elapsed, perr = time.Since(t0), err
		if err == nil {
			msgs = out.Messages
		}
	}()
	time.Sleep(500 * time.Millisecond)
	_, err := s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(s.std), MessageBody: aws.String("wake-up")})
	must(err, "SendMessage")
	wg.Wait()
	must(perr, "long-poll ReceiveMessage")
	check(len(msgs) == 1 && aws.StringValue(msgs[0].Body) == "wake-up", "long poll got %v", msgs)
	check(elapsed > 300*time.Millisecond && elapsed < 5*time.Second, "long poll returned after %v", elapsed)
	fmt.Printf("       long poll woke after %.2fs\n", elapsed.Seconds())
	s.del(s.std, msgs[0])
}

func (s *v1Scenario) changeVisibility() {
	_, err := s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(s.std), MessageBody: aws.String("vis")})
	must(err, "SendMessage")
	first := s.receive(s.std, sqs.ReceiveMessageInput{VisibilityTimeout: aws.Int64(30)})
	check(len(first) == 1 && aws.StringValue(first[0].Body) == "vis", "first receive %v", first)
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "message visible during its visibility timeout")
	_, err = s.sqs.ChangeMessageVisibility(&sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(s.std),
		ReceiptHandle: first[0].ReceiptHandle, VisibilityTimeout: aws.Int64(0)})
	must(err, "ChangeMessageVisibility")
	again := s.receive(s.std, sqs.ReceiveMessageInput{AttributeNames: aws.StringSlice([]string{"ApproximateReceiveCount"})})
	check(len(again) == 1 && aws.StringValue(again[0].MessageId) == aws.StringValue(first[0].MessageId),
		"after ChangeMessageVisibility 0: %v", again)
	check(aws.StringValue(again[0].Attributes["ApproximateReceiveCount"]) == "2", "%v", again[0].Attributes)
	s.del(s.std, again[0])
}

func (s *v1Scenario) fifoOrder() {
	var seqs []string
	for i, dedup := range []string{"d1", "d2", "d1", "d3"} {
		out, err := s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(s.fifo),
			MessageBody: aws.String(fmt.Sprintf("f-%d", i)), MessageGroupId: aws.String("g1"),
			MessageDeduplicationId: aws.String(dedup)})
		must(err, "SendMessage fifo")
		if i != 2 {
			check(aws.StringValue(out.SequenceNumber) != "", "no SequenceNumber: %v", out)
			seqs = append(seqs, aws.StringValue(out.SequenceNumber))
		}
	}
	check(len(seqs) == 3 && seqs[0] != seqs[1] && seqs[1] != seqs[2], "sequence numbers %v", seqs)
	var bodies []string
	for i := 0; i < 10; i++ {
		msgs := s.receive(s.fifo, sqs.ReceiveMessageInput{AttributeNames: aws.StringSlice([]string{"All"})})
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			check(aws.StringValue(m.Attributes["MessageGroupId"]) == "g1", "%v", m.Attributes)
			bodies = append(bodies, aws.StringValue(m.Body))
			s.del(s.fifo, m)
		}
	}
	check(fmt.Sprint(bodies) == "[f-0 f-1 f-3]", "fifo bodies %v", bodies)
}

func (s *v1Scenario) tags() {
	_, err := s.sqs.TagQueue(&sqs.TagQueueInput{QueueUrl: aws.String(s.std),
		Tags: aws.StringMap(map[string]string{"env": "test", "team": "core"})})
	must(err, "TagQueue")
	out, err := s.sqs.ListQueueTags(&sqs.ListQueueTagsInput{QueueUrl: aws.String(s.std)})
	must(err, "ListQueueTags")
	got := aws.StringValueMap(out.Tags)
	check(len(got) == 2 && got["env"] == "test" && got["team"] == "core", "tags %v", got)
	_, err = s.sqs.UntagQueue(&sqs.UntagQueueInput{QueueUrl: aws.String(s.std), TagKeys: aws.StringSlice([]string{"team"})})
	must(err, "UntagQueue")
	out, err = s.sqs.ListQueueTags(&sqs.ListQueueTagsInput{QueueUrl: aws.String(s.std)})
	must(err, "ListQueueTags")
	got = aws.StringValueMap(out.Tags)
	check(len(got) == 1 && got["env"] == "test", "tags after untag %v", got)
}

func (s *v1Scenario) purge() {
	for i := 0; i < 3; i++ {
		_, err := s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(s.std),
			MessageBody: aws.String(fmt.Sprintf("purge-%d", i))})
		must(err, "SendMessage")
	}
	_, err := s.sqs.PurgeQueue(&sqs.PurgeQueueInput{QueueUrl: aws.String(s.std)})
	must(err, "PurgeQueue")
	check(len(s.receive(s.std, sqs.ReceiveMessageInput{})) == 0, "messages left after purge")
	out, err := s.sqs.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: aws.StringSlice([]string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"})})
	must(err, "GetQueueAttributes")
	got := aws.StringValueMap(out.Attributes)
	check(len(got) == 2 && got["ApproximateNumberOfMessages"] == "0" &&
		got["ApproximateNumberOfMessagesNotVisible"] == "0", "after purge %v", got)
}

func (s *v1Scenario) queueAttributes() {
	out, err := s.sqs.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: aws.StringSlice([]string{"All"})})
	must(err, "GetQueueAttributes All")
	attrs := aws.StringValueMap(out.Attributes)
	for _, k := range []string{"QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds",
		"MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout"} {
		_, ok := attrs[k]
		check(ok, "attribute %s missing: %v", k, attrs)
	}
	check(attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:"+s.prefix+"-std", "QueueArn %s", attrs["QueueArn"])
	check(attrs["VisibilityTimeout"] == "30", "VisibilityTimeout %s", attrs["VisibilityTimeout"])
	_, err = s.sqs.SetQueueAttributes(&sqs.SetQueueAttributesInput{QueueUrl: aws.String(s.std),
		Attributes: aws.StringMap(map[string]string{"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600"})})
	must(err, "SetQueueAttributes")
	out, err = s.sqs.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: aws.StringSlice([]string{"VisibilityTimeout", "MessageRetentionPeriod"})})
	must(err, "GetQueueAttributes")
	attrs = aws.StringValueMap(out.Attributes)
	check(len(attrs) == 2 && attrs["VisibilityTimeout"] == "45" && attrs["MessageRetentionPeriod"] == "3600",
		"after SetQueueAttributes %v", attrs)
	out, err = s.sqs.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.fifo),
		AttributeNames: aws.StringSlice([]string{"All"})})
	must(err, "GetQueueAttributes fifo")
	attrs = aws.StringValueMap(out.Attributes)
	check(attrs["FifoQueue"] == "true" && attrs["ContentBasedDeduplication"] == "false", "fifo %v", attrs)
}

func v1CheckMissing(err error, what string) {
	check(err != nil, "%s of a missing queue succeeded", what)
	aerr, ok := err.(awserr.RequestFailure)
	check(ok, "%s: error %T is not an awserr.RequestFailure: %v", what, err, err)
	check(aerr.Code() == sqs.ErrCodeQueueDoesNotExist && aerr.Code() == nonExistent,
		"%s: code %q", what, aerr.Code())
	check(aerr.StatusCode() == 400, "%s: HTTP %d", what, aerr.StatusCode())
	check(aerr.RequestID() != "", "%s: no request id", what)
}

func (s *v1Scenario) missingQueue() {
	_, err := s.sqs.GetQueueUrl(&sqs.GetQueueUrlInput{QueueName: aws.String(s.prefix + "-does-not-exist")})
	v1CheckMissing(err, "GetQueueUrl")
	fmt.Printf("       caught awserr.RequestFailure: Code=%s HTTP %d\n", err.(awserr.RequestFailure).Code(),
		err.(awserr.RequestFailure).StatusCode())
	_, err = s.sqs.SendMessage(&sqs.SendMessageInput{QueueUrl: aws.String(strings.Replace(s.std, "-std", "-nope", 1)),
		MessageBody: aws.String("x")})
	v1CheckMissing(err, "SendMessage")
}

func (s *v1Scenario) deleteQueues() {
	for _, u := range []string{s.std, s.fifo} {
		_, err := s.sqs.DeleteQueue(&sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		must(err, "DeleteQueue")
	}
	out, err := s.sqs.ListQueues(&sqs.ListQueuesInput{QueueNamePrefix: aws.String(s.prefix)})
	must(err, "ListQueues")
	check(len(out.QueueUrls) == 0, "queues left: %v", aws.StringValueSlice(out.QueueUrls))
	_, err = s.sqs.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.std),
		AttributeNames: aws.StringSlice([]string{"All"})})
	v1CheckMissing(err, "GetQueueAttributes of a deleted queue")
}
