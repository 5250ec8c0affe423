// The AWS SDK for Go v1 (Debian's packaged 1.44.133) publishes through SNS topics into SQS
// queues on one localsqs (tests/compat/README.md, SNS). Built in GOPATH mode like ../../go.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go/aws"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/credentials"
	"github.com/aws/aws-sdk-go/aws/session"
	"github.com/aws/aws-sdk-go/service/sns"
	"github.com/aws/aws-sdk-go/service/sqs"
)

var name = "sns-go-v1"

type recorder struct{ bodies []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(b))
		if strings.Contains(req.Header.Get("Authorization"), "/sns/aws4_request") {
			r.bodies = append(r.bodies, string(b))
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func check(ok bool, what string) {
	if !ok {
		fmt.Printf("FAIL %s: %s\n", name, what)
		os.Exit(1)
	}
	fmt.Printf("ok   %s: %s\n", name, what)
}

func must(err error, what string) {
	if err != nil {
		check(false, what+": "+err.Error())
	}
}

func main() {
	endpoint := flag.String("endpoint", "", "localsqs endpoint")
	flag.Parse()
	rec := &recorder{}
	sess := session.Must(session.NewSession(&aws.Config{
		Endpoint:    endpoint,
		Region:      aws.String("us-east-1"),
		Credentials: credentials.NewStaticCredentials("test", "test", ""),
		HTTPClient:  &http.Client{Transport: rec},
		MaxRetries:  aws.Int(0),
	}))
	snsc := sns.New(sess)
	sqsc := sqs.New(sess)
	queue := func(q string) (string, string) {
		in := &sqs.CreateQueueInput{QueueName: aws.String(name + "-" + q)}
		if strings.HasSuffix(q, ".fifo") {
			in.Attributes = map[string]*string{"FifoQueue": aws.String("true")}
		}
		out, err := sqsc.CreateQueue(in)
		must(err, "CreateQueue")
		a, err := sqsc.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []*string{aws.String("QueueArn")}})
		must(err, "GetQueueAttributes")
		return *out.QueueUrl, *a.Attributes["QueueArn"]
	}
	receive := func(url string) []*sqs.Message {
		out, err := sqsc.ReceiveMessage(&sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: aws.Int64(10), MessageAttributeNames: []*string{aws.String("All")}})
		must(err, "ReceiveMessage")
		return out.Messages
	}
	t, err := snsc.CreateTopic(&sns.CreateTopicInput{Name: aws.String(name + "-events")})
	must(err, "CreateTopic")
	topic := *t.TopicArn
	envURL, envARN := queue("envelope")
	rawURL, rawARN := queue("raw")
	fltURL, fltARN := queue("filtered")
	_, err = snsc.Subscribe(&sns.SubscribeInput{TopicArn: &topic, Protocol: aws.String("sqs"), Endpoint: &envARN})
	must(err, "Subscribe")
	_, err = snsc.Subscribe(&sns.SubscribeInput{TopicArn: &topic, Protocol: aws.String("sqs"), Endpoint: &rawARN,
		Attributes: map[string]*string{"RawMessageDelivery": aws.String("true")}})
	must(err, "Subscribe raw")
	_, err = snsc.Subscribe(&sns.SubscribeInput{TopicArn: &topic, Protocol: aws.String("sqs"), Endpoint: &fltARN,
		Attributes: map[string]*string{"RawMessageDelivery": aws.String("true"), "FilterPolicy": aws.String(`{"n":[{"numeric":[">=",10]}]}`)}})
	must(err, "Subscribe filtered")
	for _, n := range []string{"5", "50"} {
		_, err = snsc.Publish(&sns.PublishInput{TopicArn: &topic, Message: aws.String("n=" + n),
			MessageAttributes: map[string]*sns.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String(n)}}})
		must(err, "Publish")
	}
	env := receive(envURL)
	check(len(env) == 2, "the envelope queue got both")
	var e map[string]interface{}
	must(json.Unmarshal([]byte(*env[0].Body), &e), "envelope JSON")
	check(e["Type"] == "Notification" && e["TopicArn"] == topic, "envelope fields")
	raw := receive(rawURL)
	bodies := []string{*raw[0].Body, *raw[1].Body}
	sort.Strings(bodies)
	check(bodies[0] == "n=5" && bodies[1] == "n=50", "raw bodies")
	check(*raw[0].MessageAttributes["n"].DataType == "Number", "raw attributes")
	flt := receive(fltURL)
	check(len(flt) == 1 && *flt[0].Body == "n=50", "numeric filter")

	ft, err := snsc.CreateTopic(&sns.CreateTopicInput{Name: aws.String(name + "-f.fifo"), Attributes: map[string]*string{"FifoTopic": aws.String("true")}})
	must(err, "CreateTopic FIFO")
	fURL, fARN := queue("f.fifo")
	_, err = snsc.Subscribe(&sns.SubscribeInput{TopicArn: ft.TopicArn, Protocol: aws.String("sqs"), Endpoint: &fARN,
		Attributes: map[string]*string{"RawMessageDelivery": aws.String("true")}})
	must(err, "Subscribe FIFO")
	a, err := snsc.Publish(&sns.PublishInput{TopicArn: ft.TopicArn, Message: aws.String("one"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")})
	must(err, "Publish FIFO")
	dup, err := snsc.Publish(&sns.PublishInput{TopicArn: ft.TopicArn, Message: aws.String("one"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")})
	must(err, "Publish FIFO duplicate")
	check(*a.MessageId == *dup.MessageId && *a.SequenceNumber == *dup.SequenceNumber, "FIFO duplicate")
	check(len(receive(fURL)) == 1, "FIFO delivered once")

	_, err = snsc.GetTopicAttributes(&sns.GetTopicAttributesInput{TopicArn: aws.String(strings.Replace(topic, "events", "missing", 1))})
	ae, ok := err.(awserr.RequestFailure)
	check(ok && ae.Code() == "NotFound" && ae.StatusCode() == 404 && ae.Message() == "Topic does not exist", "NotFound")
	for _, arn := range []string{topic, *ft.TopicArn} {
		_, err = snsc.DeleteTopic(&sns.DeleteTopicInput{TopicArn: aws.String(arn)})
		must(err, "DeleteTopic")
	}
	for _, b := range rec.bodies {
		check(strings.Contains(b, "Version=2010-03-31") && strings.HasPrefix(b, "Action="), "Query: "+b[:strings.Index(b, "&")])
	}
	fmt.Printf("EVIDENCE %s: POST %s/ -> QUERY (body=%s...)\n", name, *endpoint, rec.bodies[0][:40])
}
