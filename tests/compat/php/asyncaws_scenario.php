<?php
// The compatibility scenario through AsyncAws SQS (the client under Symfony Messenger's SQS
// transport), as Debian packages it (php-async-aws-sqs, Query protocol). Run by run.sh:
//
//     php asyncaws_scenario.php --endpoint http://127.0.0.1:PORT --name php-asyncaws
//
// AsyncAws exposes no TagQueue/ListQueueTags/UntagQueue, SetQueueAttributes,
// ListDeadLetterSourceQueues or Add/RemovePermission, and checks no MD5 itself: the scenario
// checks every MD5 the server returns. Results are lazy (the request completes when the result
// is read, resolved or destroyed), so the scenario resolves each one before the next step. Every request goes through a recording HTTP client
// decorator, and the run fails unless all of them used the Query protocol.

declare(strict_types=1);

require_once '/usr/share/php/AsyncAws/Sqs/autoload.php';
require_once '/usr/share/php/AsyncAws/Core/autoload.php';

use AsyncAws\Core\Credentials\Credentials;
use AsyncAws\Core\Exception\Http\ClientException;
use AsyncAws\Sqs\Exception\QueueDoesNotExistException;
use AsyncAws\Sqs\SqsClient;
use AsyncAws\Sqs\ValueObject\Message;
use Symfony\Component\HttpClient\DecoratorTrait;
use Symfony\Component\HttpClient\HttpClient;
use Symfony\Contracts\HttpClient\HttpClientInterface;
use Symfony\Contracts\HttpClient\ResponseInterface;

const NON_EXISTENT = 'AWS.SimpleQueueService.NonExistentQueue';

final class Recorder implements HttpClientInterface
{
    use DecoratorTrait;

    /** @var list<array{string,string,array,string}> */
    public array $requests = [];

    public function request(string $method, string $url, array $options = []): ResponseInterface
    {
        $body = $options['body'] ?? '';
        $this->requests[] = [$method, $url, $options['headers'] ?? [], is_string($body) ? $body : '<stream>'];

        return $this->client->request($method, $url, $options);
    }
}

final class Failure extends Exception
{
}

function check(bool $cond, string $message): void
{
    if (!$cond) {
        throw new Failure($message);
    }
}

function md5_of_attributes(array $attrs): string
{
    ksort($attrs, SORT_STRING);
    $buf = '';
    $field = fn (string $s): string => pack('N', strlen($s)) . $s;
    foreach ($attrs as $name => $a) {
        $buf .= $field((string) $name) . $field($a['DataType']);
        if (array_key_exists('BinaryValue', $a)) {
            $buf .= "\x02" . $field($a['BinaryValue']);
        } else {
            $buf .= "\x01" . $field($a['StringValue']);
        }
    }

    return md5($buf);
}

// Vectors from the protocol reference (section 6.4), as in python/common.py.
(function (): void {
    $v = [
        [['Foo' => ['DataType' => 'String', 'StringValue' => 'Bar']], 'ae7155c6026991b6d54b11589678bf9c'],
        [['timestamp' => ['DataType' => 'Number.java.lang.Long', 'StringValue' => '1493147359900']], '2e2e4876d8e0bd6b8c2c8f556831c349'],
        [['b' => ['DataType' => 'Binary', 'BinaryValue' => "\x00\x01\x02"]], '0911ac989fa4a4b3440f074ba9941547'],
    ];
    foreach ($v as [$attrs, $want]) {
        if (md5_of_attributes($attrs) !== $want) {
            fwrite(STDERR, "md5_of_attributes self-test failed\n");
            exit(2);
        }
    }
})();

final class Scenario
{
    private SqsClient $sqs;
    private Recorder $recorder;
    private string $prefix;
    private string $std = '';
    private string $fifo = '';
    /** @var list<string> */
    public array $failures = [];

    private const ATTRS = [
        'color' => ['DataType' => 'String', 'StringValue' => "blue \u{e9}\u{6f22}"],
        'timestamp' => ['DataType' => 'Number.java.lang.Long', 'StringValue' => '1493147359900'],
        'blob' => ['DataType' => 'Binary', 'BinaryValue' => "\x00\x01\xfe\xff\x80\n\x7f"],
    ];

    public function __construct(string $endpoint, private string $name)
    {
        $this->prefix = sprintf('compat-%s-%d', $name, getmypid());
        $this->recorder = new Recorder(HttpClient::create(['timeout' => 30]));
        $this->sqs = new SqsClient([
            'endpoint' => $endpoint,
            'region' => 'us-east-1',
            'sharedConfigFile' => '/dev/null',
            'sharedCredentialsFile' => '/dev/null',
        ], new Credentials('test', 'test'), $this->recorder);
    }

    private function step(string $title, callable $fn): void
    {
        $t0 = microtime(true);
        try {
            $fn();
            printf("  ok   %-30s (%.2fs)\n", $title, microtime(true) - $t0);
        } catch (Throwable $e) {
            $this->failures[] = $title;
            printf("  FAIL %-30s %s: %s\n", $title, get_class($e), $e->getMessage());
            if ($e instanceof ClientException) {
                printf("       HTTP %d code=%s message=%s\n", $e->getCode(), $e->getAwsCode(), $e->getAwsMessage());
            }
            foreach (array_slice(explode("\n", $e->getTraceAsString()), 0, 4) as $line) {
                echo "       $line\n";
            }
        }
    }

    private function queue(string $suffix, array $attrs = []): string
    {
        $in = ['QueueName' => "{$this->prefix}-$suffix"];
        if ($attrs) {
            $in['Attributes'] = $attrs;
        }

        return $this->sqs->createQueue($in)->getQueueUrl();
    }

    /** @return list<Message> */
    private function receive(string $url, array $in = []): array
    {
        return $this->sqs->receiveMessage($in + [
            'QueueUrl' => $url, 'MaxNumberOfMessages' => 10, 'WaitTimeSeconds' => 0,
        ])->getMessages();
    }

    private function delete(string $url, Message $m): void
    {
        $this->sqs->deleteMessage(['QueueUrl' => $url, 'ReceiptHandle' => $m->getReceiptHandle()])->resolve();
    }

    private static function attrsOf(Message $m): array
    {
        $out = [];
        foreach ($m->getMessageAttributes() as $name => $v) {
            $a = ['DataType' => $v->getDataType()];
            if (null !== $v->getBinaryValue()) {
                $a['BinaryValue'] = $v->getBinaryValue();
            } else {
                $a['StringValue'] = $v->getStringValue();
            }
            $out[$name] = $a;
        }

        return $out;
    }

    private static function checkBody(Message $m): void
    {
        check($m->getMd5OfBody() === md5($m->getBody()), sprintf('MD5OfBody %s of body %s', $m->getMd5OfBody(), json_encode($m->getBody())));
    }

    public function createQueues(): void
    {
        $this->std = $this->queue('std');
        $this->fifo = $this->queue('fifo.fifo', ['FifoQueue' => 'true']);
        check(str_ends_with($this->std, "/000000000000/{$this->prefix}-std"), "queue URL {$this->std}");
        check(str_ends_with($this->fifo, '.fifo'), "fifo URL {$this->fifo}");
        $urls = iterator_to_array($this->sqs->listQueues(['QueueNamePrefix' => $this->prefix]), false);
        sort($urls);
        $want = [$this->fifo, $this->std];
        sort($want);
        check($urls === $want, 'ListQueues ' . json_encode($urls));
        check($this->queue('std') === $this->std, 'CreateQueue again returned another URL');
        check($this->sqs->queueExists(['QueueName' => "{$this->prefix}-std"])->isSuccess(), 'queueExists waiter: not found');
    }

    public function sendReceiveAttributes(): void
    {
        $body = "hello <localsqs> & \"friends\" \u{e9}";
        $sent = $this->sqs->sendMessage(['QueueUrl' => $this->std, 'MessageBody' => $body, 'MessageAttributes' => self::ATTRS]);
        check($sent->getMd5OfMessageBody() === md5($body), 'MD5OfMessageBody ' . $sent->getMd5OfMessageBody());
        check($sent->getMd5OfMessageAttributes() === md5_of_attributes(self::ATTRS),
            sprintf('MD5OfMessageAttributes %s, want %s', $sent->getMd5OfMessageAttributes(), md5_of_attributes(self::ATTRS)));
        $msgs = $this->receive($this->std, ['MessageAttributeNames' => ['All'], 'AttributeNames' => ['All'], 'WaitTimeSeconds' => 2]);
        check(1 === count($msgs), 'received ' . count($msgs) . ' messages');
        $m = $msgs[0];
        check($m->getMessageId() === $sent->getMessageId(), 'MessageId ' . $m->getMessageId());
        check($m->getBody() === $body, 'Body ' . json_encode($m->getBody()));
        self::checkBody($m);
        $got = self::attrsOf($m);
        ksort($got);
        $want = self::ATTRS;
        ksort($want);
        check($got === $want, 'MessageAttributes ' . json_encode(array_map(fn ($a) => array_map('bin2hex', $a), $got)));
        check($m->getMd5OfMessageAttributes() === md5_of_attributes($got), 'MD5OfMessageAttributes ' . $m->getMd5OfMessageAttributes());
        $attrs = $m->getAttributes();
        check(($attrs['ApproximateReceiveCount'] ?? null) === '1', 'attributes ' . json_encode($attrs));
        foreach (['SentTimestamp', 'ApproximateFirstReceiveTimestamp', 'SenderId'] as $k) {
            check(isset($attrs[$k]), "attribute $k missing: " . json_encode($attrs));
        }
        $this->delete($this->std, $m);
        check([] === $this->receive($this->std), 'queue not empty after delete');
    }

    public function batches(): void
    {
        $num = ['n' => ['DataType' => 'Number', 'StringValue' => '7']];
        $entries = [];
        for ($i = 0; $i < 3; ++$i) {
            $entries[] = ['Id' => "m$i", 'MessageBody' => "batch-$i"] + (0 === $i ? ['MessageAttributes' => $num] : []);
        }
        $res = $this->sqs->sendMessageBatch(['QueueUrl' => $this->std, 'Entries' => $entries]);
        check([] === $res->getFailed() && 3 === count($res->getSuccessful()), 'SendMessageBatch failed entries');
        foreach ($res->getSuccessful() as $e) {
            $i = substr($e->getId(), 1);
            check($e->getMd5OfMessageBody() === md5("batch-$i"), 'entry MD5OfMessageBody ' . $e->getMd5OfMessageBody());
            if ('0' === $i) {
                check($e->getMd5OfMessageAttributes() === md5_of_attributes($num), 'entry MD5OfMessageAttributes');
            }
        }
        $got = [];
        $deadline = microtime(true) + 5;
        while (count($got) < 3 && microtime(true) < $deadline) {
            foreach ($this->receive($this->std, ['WaitTimeSeconds' => 1]) as $m) {
                self::checkBody($m);
                $got[$m->getBody()] = $m;
            }
        }
        ksort($got);
        check(['batch-0', 'batch-1', 'batch-2'] === array_keys($got), 'received ' . json_encode(array_keys($got)));
        $handles = array_map(fn (Message $m) => $m->getReceiptHandle(), array_values($got));

        $cv = $this->sqs->changeMessageVisibilityBatch(['QueueUrl' => $this->std, 'Entries' => [
            ['Id' => 'ok', 'ReceiptHandle' => $handles[0], 'VisibilityTimeout' => 60],
            ['Id' => 'bad', 'ReceiptHandle' => 'not-a-receipt-handle', 'VisibilityTimeout' => 60],
        ]]);
        check(['ok'] === array_map(fn ($e) => $e->getId(), $cv->getSuccessful()), 'ChangeMessageVisibilityBatch successful');
        $failed = $cv->getFailed();
        check(1 === count($failed) && 'bad' === $failed[0]->getId(), 'ChangeMessageVisibilityBatch failed');
        check('ReceiptHandleIsInvalid' === $failed[0]->getCode() && true === $failed[0]->getSenderFault(),
            sprintf('failed entry code %s senderFault %s', $failed[0]->getCode(), var_export($failed[0]->getSenderFault(), true)));

        $dels = [];
        foreach ($handles as $i => $h) {
            $dels[] = ['Id' => "d$i", 'ReceiptHandle' => $h];
        }
        $dels[] = ['Id' => 'bad', 'ReceiptHandle' => 'not-a-receipt-handle'];
        $dr = $this->sqs->deleteMessageBatch(['QueueUrl' => $this->std, 'Entries' => $dels]);
        $ok = array_map(fn ($e) => $e->getId(), $dr->getSuccessful());
        sort($ok);
        check(['d0', 'd1', 'd2'] === $ok, 'DeleteMessageBatch successful ' . json_encode($ok));
        $failed = $dr->getFailed();
        check(1 === count($failed) && 'bad' === $failed[0]->getId(), 'DeleteMessageBatch failed');
        check('ReceiptHandleIsInvalid' === $failed[0]->getCode() && true === $failed[0]->getSenderFault(), 'failed entry ' . $failed[0]->getCode());
        check([] === $this->receive($this->std), 'queue not empty');
    }

    public function changeVisibility(): void
    {
        $sent = $this->sqs->sendMessage(['QueueUrl' => $this->std, 'MessageBody' => 'vis']);
        $sent->resolve(); // AsyncAws results are lazy: make sure the send happened first
        $first = $this->receive($this->std, ['VisibilityTimeout' => 30]);
        check(1 === count($first) && $first[0]->getMessageId() === $sent->getMessageId(), 'first receive');
        check([] === $this->receive($this->std), 'message visible during its visibility timeout');
        $this->sqs->changeMessageVisibility(['QueueUrl' => $this->std, 'ReceiptHandle' => $first[0]->getReceiptHandle(), 'VisibilityTimeout' => 0])->resolve();
        $again = $this->receive($this->std, ['AttributeNames' => ['ApproximateReceiveCount']]);
        check(1 === count($again) && $again[0]->getMessageId() === $sent->getMessageId(), 'not receivable after ChangeMessageVisibility 0');
        check('2' === ($again[0]->getAttributes()['ApproximateReceiveCount'] ?? null), 'ApproximateReceiveCount ' . json_encode($again[0]->getAttributes()));
        $this->delete($this->std, $again[0]);
    }

    public function fifoOrder(): void
    {
        $seqs = [];
        foreach (['d1', 'd2', 'd1', 'd3'] as $i => $dedup) {
            $r = $this->sqs->sendMessage(['QueueUrl' => $this->fifo, 'MessageBody' => "f-$i", 'MessageGroupId' => 'g1', 'MessageDeduplicationId' => $dedup]);
            $r->resolve();
            if (2 !== $i) {
                check(ctype_digit((string) $r->getSequenceNumber()), 'SequenceNumber ' . var_export($r->getSequenceNumber(), true));
                $seqs[] = $r->getSequenceNumber();
            }
        }
        check(3 === count(array_unique($seqs)), 'sequence numbers ' . json_encode($seqs));
        $bodies = [];
        for ($n = 0; $n < 10; ++$n) {
            $msgs = $this->receive($this->fifo, ['AttributeNames' => ['All']]);
            if (!$msgs) {
                break;
            }
            foreach ($msgs as $m) {
                check('g1' === ($m->getAttributes()['MessageGroupId'] ?? null), 'MessageGroupId');
                $bodies[] = $m->getBody();
                $this->delete($this->fifo, $m);
            }
        }
        check(['f-0', 'f-1', 'f-3'] === $bodies, 'fifo bodies ' . json_encode($bodies));
    }

    public function purge(): void
    {
        for ($i = 0; $i < 3; ++$i) {
            $this->sqs->sendMessage(['QueueUrl' => $this->std, 'MessageBody' => "purge-$i"])->resolve();
        }
        $this->sqs->purgeQueue(['QueueUrl' => $this->std])->resolve();
        check([] === $this->receive($this->std), 'messages left after purge');
        $attrs = $this->sqs->getQueueAttributes(['QueueUrl' => $this->std, 'AttributeNames' => ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']])->getAttributes();
        ksort($attrs);
        check(['ApproximateNumberOfMessages' => '0', 'ApproximateNumberOfMessagesNotVisible' => '0'] === $attrs, 'after purge ' . json_encode($attrs));
    }

    public function queueAttributes(): void
    {
        $attrs = $this->sqs->getQueueAttributes(['QueueUrl' => $this->std, 'AttributeNames' => ['All']])->getAttributes();
        foreach (['QueueArn', 'CreatedTimestamp', 'LastModifiedTimestamp', 'DelaySeconds', 'MaximumMessageSize', 'MessageRetentionPeriod', 'ReceiveMessageWaitTimeSeconds', 'VisibilityTimeout'] as $k) {
            check(isset($attrs[$k]), "attribute $k missing: " . json_encode($attrs));
        }
        check("arn:aws:sqs:us-east-1:000000000000:{$this->prefix}-std" === $attrs['QueueArn'], 'QueueArn ' . $attrs['QueueArn']);
        check('30' === $attrs['VisibilityTimeout'], 'VisibilityTimeout ' . $attrs['VisibilityTimeout']);
        // No SetQueueAttributes in AsyncAws: attributes given at creation instead.
        $url = $this->queue('attrs', ['VisibilityTimeout' => '45', 'MessageRetentionPeriod' => '3600']);
        $attrs = $this->sqs->getQueueAttributes(['QueueUrl' => $url, 'AttributeNames' => ['VisibilityTimeout', 'MessageRetentionPeriod']])->getAttributes();
        ksort($attrs);
        check(['MessageRetentionPeriod' => '3600', 'VisibilityTimeout' => '45'] === $attrs, 'created with attributes ' . json_encode($attrs));
        $this->sqs->deleteQueue(['QueueUrl' => $url])->resolve();
        $attrs = $this->sqs->getQueueAttributes(['QueueUrl' => $this->fifo, 'AttributeNames' => ['All']])->getAttributes();
        check('true' === ($attrs['FifoQueue'] ?? null) && 'false' === ($attrs['ContentBasedDeduplication'] ?? null), 'fifo ' . json_encode($attrs));
    }

    private static function expectMissing(callable $call, string $what, bool $modeled): void
    {
        try {
            $call();
        } catch (ClientException $e) {
            if ($modeled) {
                check($e instanceof QueueDoesNotExistException, "$what: " . get_class($e) . ' is not a QueueDoesNotExistException');
            }
            check(NON_EXISTENT === $e->getAwsCode(), "$what: code " . $e->getAwsCode());
            check(400 === $e->getCode(), "$what: HTTP " . $e->getCode());
            check('Sender' === $e->getAwsType(), "$what: type " . $e->getAwsType());

            return;
        }
        throw new Failure("$what of a missing queue succeeded");
    }

    public function missingQueue(): void
    {
        $name = "{$this->prefix}-does-not-exist";
        self::expectMissing(fn () => $this->sqs->getQueueUrl(['QueueName' => $name])->getQueueUrl(), 'GetQueueUrl', true);
        echo "       caught QueueDoesNotExistException: code " . NON_EXISTENT . ", HTTP 400\n";
        check(false === $this->sqs->queueExists(['QueueName' => $name])->isSuccess(), 'queueExists waiter: found a missing queue');
        self::expectMissing(fn () => $this->sqs->sendMessage(['QueueUrl' => str_replace('-std', '-nope', $this->std), 'MessageBody' => 'x'])->resolve(), 'SendMessage', false);
    }

    public function deleteQueues(): void
    {
        foreach ([$this->std, $this->fifo] as $u) {
            $this->sqs->deleteQueue(['QueueUrl' => $u])->resolve();
        }
        $left = iterator_to_array($this->sqs->listQueues(['QueueNamePrefix' => $this->prefix]), false);
        check([] === $left, 'queues left ' . json_encode($left));
        self::expectMissing(fn () => $this->sqs->getQueueAttributes(['QueueUrl' => $this->std, 'AttributeNames' => ['All']])->resolve(), 'GetQueueAttributes of a deleted queue', false);
    }

    private static function classify(array $headers, string $body, string $url): array
    {
        foreach ($headers as $k => $v) {
            if (0 === strcasecmp((string) $k, 'x-amz-target')) {
                $t = is_array($v) ? $v[0] : $v;
                if (str_starts_with($t, 'AmazonSQS.')) {
                    return ['json', substr($t, 10)];
                }
            }
        }
        if (preg_match('/(?:^|&)Action=([A-Za-z]+)/', $body, $m)) {
            return ['query', $m[1]];
        }

        return [str_contains($url, 'Action=') ? 'query' : 'unknown', '?'];
    }

    public function protocolCheck(): void
    {
        $reqs = $this->recorder->requests;
        check([] !== $reqs, 'no request was captured');
        [$method, $url, $headers, $body] = $reqs[0];
        [$kind] = self::classify($headers, $body, $url);
        $ct = '';
        foreach ($headers as $k => $v) {
            if (0 === strcasecmp((string) $k, 'content-type')) {
                $ct = is_array($v) ? $v[0] : $v;
            }
        }
        printf("EVIDENCE %s: %s %s -> %s (Content-Type: %s; body=%s)\n", $this->name, $method, $url, strtoupper($kind), $ct, substr($body, 0, 80));
        $kinds = [];
        $ops = [];
        foreach ($reqs as [$m, $u, $h, $b]) {
            [$k, $op] = self::classify($h, $b, $u);
            $kinds[$k] = ($kinds[$k] ?? 0) + 1;
            $ops[$op] = true;
        }
        check(['query' => count($reqs)] === $kinds, 'expected every request to use query, saw ' . json_encode($kinds));
        ksort($ops);
        printf("       %d requests, all QUERY; operations: %s\n", count($reqs), implode(' ', array_keys($ops)));
    }

    public function run(): bool
    {
        $deb = fn (string $pkg): string => trim((string) shell_exec('dpkg-query -W -f=\'${Version}\' ' . $pkg . ' 2>/dev/null')) ?: '?';
        printf("%s: AsyncAws SQS (Debian php-async-aws-sqs %s, php-async-aws-core %s), PHP %s, protocol expected QUERY\n",
            $this->name, $deb('php-async-aws-sqs'), $deb('php-async-aws-core'), PHP_VERSION);
        $this->step('create queues', fn () => $this->createQueues());
        if (!$this->failures) {
            $this->step('send/receive attributes', fn () => $this->sendReceiveAttributes());
            $this->step('batch send/delete/visibility', fn () => $this->batches());
            $this->step('change visibility', fn () => $this->changeVisibility());
            $this->step('fifo order + dedup', fn () => $this->fifoOrder());
            $this->step('purge', fn () => $this->purge());
            $this->step('queue attributes', fn () => $this->queueAttributes());
            $this->step('missing queue error', fn () => $this->missingQueue());
            $this->step('delete queues', fn () => $this->deleteQueues());
        }
        $this->step('protocol evidence', fn () => $this->protocolCheck());

        return !$this->failures;
    }
}

$opts = getopt('', ['endpoint:', 'name:']);
if (!isset($opts['endpoint'], $opts['name'])) {
    fwrite(STDERR, "usage: php asyncaws_scenario.php --endpoint URL --name NAME\n");
    exit(2);
}
exit((new Scenario($opts['endpoint'], $opts['name']))->run() ? 0 : 1);
