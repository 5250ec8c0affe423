package localsqstest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/localsqs/localsqs/go/localsqstest"
)

// A test of its own server: Start fails the test if the server cannot start, and stops it when
// the test ends.
func ExampleStart() {
	testOrders := func(t *testing.T) {
		srv := localsqstest.Start(t, localsqstest.WithRegion("eu-west-1"))
		client := srv.Client()
		out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("orders")})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("hi")})
		if _, err := srv.Advance(30 * time.Second); err != nil { // a visibility timeout passes at once
			t.Fatal(err)
		}
	}
	_ = testOrders
}

// One server for a whole package, started in TestMain and reset by the tests that need it.
func ExampleNew_testMain() {
	var srv *localsqstest.Server
	testMain := func(m *testing.M) {
		var err error
		if srv, err = localsqstest.New(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		code := m.Run()
		_ = srv.Close()
		os.Exit(code)
	}
	_ = testMain
}

// The server outside a test: New, use, Close.
func ExampleNew() {
	srv, err := localsqstest.New(localsqstest.WithAccountID("111122223333"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	out, err := srv.Client().CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(aws.ToString(out.QueueUrl) == srv.QueueURL("jobs"), srv.QueueURL("jobs")[len(srv.Endpoint()):])
	// Output: true /111122223333/jobs
}
