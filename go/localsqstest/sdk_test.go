package localsqstest_test

// aws-sdk-go-v2 (the current release from the module proxy, which speaks AWS JSON 1.0) against
// a server from Start, with the SDK's defaults: its MD5 checks of message bodies on SendMessage,
// SendMessageBatch and ReceiveMessage are on; attribute MD5s are computed here.

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/localsqs/localsqs/go/localsqstest"
)

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// md5OfAttributes is MD5OfMessageAttributes: names sorted; each name, data type and value as a
// 4-byte big-endian length and its bytes, with a transport byte (1 string, 2 binary) first.
func md5OfAttributes(attrs map[string]types.MessageAttributeValue) string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	field := func(b []byte) {
		_ = binary.Write(&buf, binary.BigEndian, uint32(len(b)))
		buf.Write(b)
	}
	for _, n := range names {
		a := attrs[n]
		field([]byte(n))
		field([]byte(aws.ToString(a.DataType)))
		if a.BinaryValue != nil {
			buf.WriteByte(2)
			field(a.BinaryValue)
		} else {
			buf.WriteByte(1)
			field([]byte(aws.ToString(a.StringValue)))
		}
	}
	return md5Hex(buf.Bytes())
}

func TestMD5OfAttributesReferenceVectors(t *testing.T) {
	for want, attrs := range map[string]map[string]types.MessageAttributeValue{
		"ae7155c6026991b6d54b11589678bf9c": {"Foo": {DataType: aws.String("String"), StringValue: aws.String("Bar")}},
		"2e2e4876d8e0bd6b8c2c8f556831c349": {"timestamp": {DataType: aws.String("Number.java.lang.Long"),
			StringValue: aws.String("1493147359900")}},
		"0911ac989fa4a4b3440f074ba9941547": {"b": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2}}},
	} {
		if got := md5OfAttributes(attrs); got != want {
			t.Errorf("md5OfAttributes(%v) = %s, want %s", attrs, got, want)
		}
	}
}

type fixture struct {
	t   *testing.T
	srv *localsqstest.Server
	sqs *sqs.Client
}

func newFixture(t *testing.T) *fixture {
	srv := localsqstest.Start(t)
	// No retry may hide a server error.
	return &fixture{t: t, srv: srv, sqs: srv.Client(func(o *sqs.Options) { o.RetryMaxAttempts = 1 })}
}

func (f *fixture) queue(name string, attrs map[string]string) string {
	f.t.Helper()
	return createQueue(f.t, f.sqs, name, attrs)
}

func (f *fixture) arn(url string) string {
	f.t.Helper()
	out, err := f.sqs.GetQueueAttributes(f.t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		f.t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

func (f *fixture) send(url, body string) *sqs.SendMessageOutput {
	f.t.Helper()
	out, err := f.sqs.SendMessage(f.t.Context(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body})
	if err != nil {
		f.t.Fatalf("SendMessage: %v", err)
	}
	return out
}

func (f *fixture) receive(url string, in sqs.ReceiveMessageInput) []types.Message {
	f.t.Helper()
	in.QueueUrl = &url
	if in.MaxNumberOfMessages == 0 {
		in.MaxNumberOfMessages = 10
	}
	out, err := f.sqs.ReceiveMessage(f.t.Context(), &in)
	if err != nil {
		f.t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

func (f *fixture) del(url string, m types.Message) {
	f.t.Helper()
	if _, err := f.sqs.DeleteMessage(f.t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
		f.t.Fatalf("DeleteMessage: %v", err)
	}
}

func (f *fixture) advance(d time.Duration) {
	f.t.Helper()
	if _, err := f.srv.Advance(d); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) counts(url string) (visible, inFlight string) {
	f.t.Helper()
	out, err := f.sqs.GetQueueAttributes(f.t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		f.t.Fatal(err)
	}
	return out.Attributes["ApproximateNumberOfMessages"], out.Attributes["ApproximateNumberOfMessagesNotVisible"]
}

var scenarioAttrs = map[string]types.MessageAttributeValue{
	"color":     {DataType: aws.String("String"), StringValue: aws.String("blue \u00e9\u6f22")},
	"timestamp": {DataType: aws.String("Number.java.lang.Long"), StringValue: aws.String("1493147359900")},
	"blob":      {DataType: aws.String("Binary"), BinaryValue: []byte{0x00, 0x01, 0xfe, 0xff, 0x80, '\n', 0x7f}},
}

const scenarioBody = "hello <localsqs> & \"friends\" \u00e9"

func TestSDKAttributesAndMD5s(t *testing.T) {
	f := newFixture(t)
	url := f.queue("attrs", nil)
	sent, err := f.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url,
		MessageBody: aws.String(scenarioBody), MessageAttributes: scenarioAttrs})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(sent.MD5OfMessageBody); got != md5Hex([]byte(scenarioBody)) {
		t.Errorf("MD5OfMessageBody %s", got)
	}
	if got, want := aws.ToString(sent.MD5OfMessageAttributes), md5OfAttributes(scenarioAttrs); got != want {
		t.Errorf("MD5OfMessageAttributes %s, want %s", got, want)
	}
	msgs := f.receive(url, sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		WaitTimeSeconds:             1})
	if len(msgs) != 1 {
		t.Fatalf("received %d messages", len(msgs))
	}
	m := msgs[0]
	if aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m.Body) != scenarioBody {
		t.Errorf("message %+v", m)
	}
	for name, want := range scenarioAttrs {
		got := m.MessageAttributes[name]
		if aws.ToString(got.DataType) != aws.ToString(want.DataType) ||
			aws.ToString(got.StringValue) != aws.ToString(want.StringValue) || !bytes.Equal(got.BinaryValue, want.BinaryValue) {
			t.Errorf("attribute %s: %+v, want %+v", name, got, want)
		}
	}
	if got := aws.ToString(m.MD5OfMessageAttributes); got != md5OfAttributes(scenarioAttrs) {
		t.Errorf("received MD5OfMessageAttributes %s", got)
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" || m.Attributes["SenderId"] == "" {
		t.Errorf("system attributes %v", m.Attributes)
	}
	for _, k := range []string{"SentTimestamp", "ApproximateFirstReceiveTimestamp"} {
		if ms, _ := strconv.ParseInt(m.Attributes[k], 10, 64); ms < 1.6e12 {
			t.Errorf("%s = %q", k, m.Attributes[k])
		}
	}
	f.del(url, m)
	if vis, inFlight := f.counts(url); vis != "0" || inFlight != "0" {
		t.Errorf("after delete: %s visible, %s in flight", vis, inFlight)
	}
}

func TestSDKBatches(t *testing.T) {
	f := newFixture(t)
	url := f.queue("batches", nil)
	num := map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String("7")}}
	entries := []types.SendMessageBatchRequestEntry{}
	for i := range 3 {
		e := types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("m%d", i)), MessageBody: aws.String(fmt.Sprintf("batch-%d", i))}
		if i == 0 {
			e.MessageAttributes = num
		}
		entries = append(entries, e)
	}
	res, err := f.sqs.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
	if err != nil || len(res.Failed) != 0 || len(res.Successful) != 3 {
		t.Fatalf("SendMessageBatch %+v, %v", res, err)
	}
	for _, e := range res.Successful {
		i := strings.TrimPrefix(aws.ToString(e.Id), "m")
		if aws.ToString(e.MD5OfMessageBody) != md5Hex([]byte("batch-"+i)) {
			t.Errorf("entry %s: MD5OfMessageBody %s", i, aws.ToString(e.MD5OfMessageBody))
		}
		if want := map[bool]string{true: md5OfAttributes(num)}[i == "0"]; aws.ToString(e.MD5OfMessageAttributes) != want {
			t.Errorf("entry %s: MD5OfMessageAttributes %q, want %q", i, aws.ToString(e.MD5OfMessageAttributes), want)
		}
	}
	handles := map[string]*string{}
	for _, m := range f.receive(url, sqs.ReceiveMessageInput{WaitTimeSeconds: 1}) {
		handles[aws.ToString(m.Body)] = m.ReceiptHandle
	}
	if len(handles) != 3 {
		t.Fatalf("received %v", handles)
	}
	bad := aws.String("not-a-receipt-handle")
	checkFailed := func(what string, failed []types.BatchResultErrorEntry) {
		t.Helper()
		if len(failed) != 1 || aws.ToString(failed[0].Id) != "bad" ||
			aws.ToString(failed[0].Code) != "ReceiptHandleIsInvalid" || !failed[0].SenderFault {
			t.Errorf("%s: failed entries %+v", what, failed)
		}
	}
	cv, err := f.sqs.ChangeMessageVisibilityBatch(t.Context(), &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("ok"), ReceiptHandle: handles["batch-0"], VisibilityTimeout: 0},
			{Id: aws.String("bad"), ReceiptHandle: bad, VisibilityTimeout: 0},
		}})
	if err != nil || len(cv.Successful) != 1 || aws.ToString(cv.Successful[0].Id) != "ok" {
		t.Fatalf("ChangeMessageVisibilityBatch %+v, %v", cv, err)
	}
	checkFailed("ChangeMessageVisibilityBatch", cv.Failed)
	again := f.receive(url, sqs.ReceiveMessageInput{})
	if len(again) != 1 || aws.ToString(again[0].Body) != "batch-0" {
		t.Fatalf("after visibility 0: %+v", again)
	}
	handles["batch-0"] = again[0].ReceiptHandle
	dels := []types.DeleteMessageBatchRequestEntry{{Id: aws.String("bad"), ReceiptHandle: bad}}
	for body, h := range handles {
		dels = append(dels, types.DeleteMessageBatchRequestEntry{Id: aws.String("d-" + body), ReceiptHandle: h})
	}
	dr, err := f.sqs.DeleteMessageBatch(t.Context(), &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: dels})
	if err != nil || len(dr.Successful) != 3 {
		t.Fatalf("DeleteMessageBatch %+v, %v", dr, err)
	}
	checkFailed("DeleteMessageBatch", dr.Failed)
	if vis, inFlight := f.counts(url); vis != "0" || inFlight != "0" {
		t.Errorf("after the batch delete: %s visible, %s in flight", vis, inFlight)
	}
}

func TestSDKFIFO(t *testing.T) {
	f := newFixture(t)
	url := f.queue("orders.fifo", map[string]string{"FifoQueue": "true"})
	var seqs []string
	for i, dedup := range []string{"d1", "d2", "d1", "d3"} {
		out, err := f.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url,
			MessageBody: aws.String(fmt.Sprintf("f-%d", i)), MessageGroupId: aws.String("g1"), MessageDeduplicationId: aws.String(dedup)})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	num := func(s string) *big.Int { n, _ := new(big.Int).SetString(s, 10); return n }
	if seqs[2] != seqs[0] || num(seqs[1]).Cmp(num(seqs[0])) <= 0 || num(seqs[3]).Cmp(num(seqs[1])) <= 0 {
		t.Errorf("sequence numbers %v (a duplicate answers with the first one's)", seqs)
	}
	var bodies []string
	for range 5 {
		msgs := f.receive(url, sqs.ReceiveMessageInput{MaxNumberOfMessages: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if len(msgs) == 0 {
			break
		}
		if msgs[0].Attributes["MessageGroupId"] != "g1" || msgs[0].Attributes["MessageDeduplicationId"] == "" {
			t.Errorf("attributes %v", msgs[0].Attributes)
		}
		bodies = append(bodies, aws.ToString(msgs[0].Body))
		f.del(url, msgs[0])
	}
	if !slices.Equal(bodies, []string{"f-0", "f-1", "f-3"}) {
		t.Errorf("bodies %v", bodies)
	}
}

func TestSDKDeadLetterQueueOnTheMovedClock(t *testing.T) {
	f := newFixture(t)
	dlq := f.queue("work-dlq", nil)
	dlqArn := f.arn(dlq)
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": 2})
	src := f.queue("work", map[string]string{"VisibilityTimeout": "30", "RedrivePolicy": string(policy)})
	id := aws.ToString(f.send(src, "poison").MessageId)
	for i := range 2 {
		got := f.receive(src, sqs.ReceiveMessageInput{})
		if len(got) != 1 || aws.ToString(got[0].MessageId) != id {
			t.Fatalf("receive %d: %+v", i+1, got)
		}
		f.advance(30 * time.Second) // the consumer failed; the visibility timeout passes at once
	}
	if got := f.receive(src, sqs.ReceiveMessageInput{}); len(got) != 0 {
		t.Fatalf("still in the source queue: %+v", got)
	}
	dead := f.receive(dlq, sqs.ReceiveMessageInput{
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if len(dead) != 1 || aws.ToString(dead[0].MessageId) != id ||
		dead[0].Attributes["DeadLetterQueueSourceArn"] != f.arn(src) {
		t.Fatalf("dead-letter queue: %+v", dead)
	}
	// Visible again, so that the move task takes it. (ReceiveMessage's VisibilityTimeout of 0 would
	// not do: this SDK leaves a zero int32 out of the request, and the queue's default applies.)
	if _, err := f.sqs.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &dlq,
		ReceiptHandle: dead[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	sources, err := f.sqs.ListDeadLetterSourceQueues(t.Context(), &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
	if err != nil || !slices.Equal(sources.QueueUrls, []string{src}) {
		t.Fatalf("ListDeadLetterSourceQueues %+v, %v", sources, err)
	}
	if _, err := f.sqs.StartMessageMoveTask(t.Context(), &sqs.StartMessageMoveTaskInput{SourceArn: &dlqArn}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tasks, err := f.sqs.ListMessageMoveTasks(t.Context(), &sqs.ListMessageMoveTasksInput{SourceArn: &dlqArn})
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks.Results) > 0 && aws.ToString(tasks.Results[0].Status) == "COMPLETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("move task %+v", tasks.Results)
		}
	}
	if back := f.receive(src, sqs.ReceiveMessageInput{WaitTimeSeconds: 1}); len(back) != 1 || aws.ToString(back[0].Body) != "poison" {
		t.Fatalf("moved back: %+v", back)
	}
}

func TestSDKLongPoll(t *testing.T) {
	f := newFixture(t)
	url := f.queue("poll", nil)
	type result struct {
		msgs    []types.Message
		err     error
		elapsed time.Duration
	}
	poll := func(wait int32) chan result {
		ch := make(chan result, 1)
		go func() {
			t0 := time.Now()
			out, err := f.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: wait})
			r := result{err: err, elapsed: time.Since(t0)}
			if err == nil {
				r.msgs = out.Messages
			}
			ch <- r
		}()
		return ch
	}
	woken := poll(10)
	time.Sleep(300 * time.Millisecond)
	f.send(url, "wake-up")
	r := <-woken
	if r.err != nil || len(r.msgs) != 1 || aws.ToString(r.msgs[0].Body) != "wake-up" || r.elapsed > 5*time.Second {
		t.Fatalf("long poll woken by a send: %+v", r)
	}
	f.del(url, r.msgs[0])

	empty := poll(20)
	time.Sleep(200 * time.Millisecond)
	f.advance(20 * time.Second) // the wait ends on the moved clock
	if r := <-empty; r.err != nil || len(r.msgs) != 0 || r.elapsed > 5*time.Second {
		t.Fatalf("empty long poll after the advance: %+v", r)
	}
}

func TestSDKErrors(t *testing.T) {
	f := newFixture(t)
	// checkAPIError: the legacy code (from x-amzn-query-error), the status and a request id.
	checkAPIError := func(what string, err error, code string, status int) {
		t.Helper()
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != code {
			t.Errorf("%s: error %T %v, want code %s", what, err, err, code)
			return
		}
		var resp *awshttp.ResponseError
		if !errors.As(err, &resp) || resp.HTTPStatusCode() != status || resp.ServiceRequestID() == "" {
			t.Errorf("%s: %v, want HTTP %d and a request id", what, err, status)
		}
	}
	const missing = "AWS.SimpleQueueService.NonExistentQueue"
	_, err := f.sqs.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Errorf("GetQueueUrl of a missing queue: %T %v, want *types.QueueDoesNotExist", err, err)
	}
	checkAPIError("GetQueueUrl", err, missing, 400)
	_, err = f.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(f.srv.QueueURL("nope")), MessageBody: aws.String("x")})
	if !errors.As(err, &qdne) {
		t.Errorf("SendMessage to a missing queue: %T %v, want *types.QueueDoesNotExist", err, err)
	}
	checkAPIError("SendMessage", err, missing, 400)

	url := f.queue("errors", nil)
	entries := []types.SendMessageBatchRequestEntry{}
	for i := range 11 {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String("x")})
	}
	_, err = f.sqs.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
	var tooMany *types.TooManyEntriesInBatchRequest
	if !errors.As(err, &tooMany) {
		t.Errorf("11 entries: %T %v", err, err)
	}
	checkAPIError("SendMessageBatch of 11", err, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400)

	_, err = f.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String("garbage")})
	var badHandle *types.ReceiptHandleIsInvalid
	if !errors.As(err, &badHandle) {
		t.Errorf("DeleteMessage with a bad handle: %T %v", err, err)
	}
	checkAPIError("DeleteMessage", err, "ReceiptHandleIsInvalid", 404) // 404, as SQS's model has it

	_, err = f.sqs.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("bad"),
		Attributes: map[string]string{"VisibilityTimeout": "99999"}})
	var badAttr *types.InvalidAttributeValue
	if !errors.As(err, &badAttr) {
		t.Errorf("CreateQueue with VisibilityTimeout 99999: %T %v", err, err)
	}
	checkAPIError("CreateQueue", err, "InvalidAttributeValue", 400)

	_, err = f.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 11})
	checkAPIError("ReceiveMessage of 11", err, "InvalidParameterValue", 400)
}
