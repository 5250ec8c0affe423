# The compatibility scenario through the legacy AWS SDK for Ruby v1 (`AWS::SQS`, Debian's
# ruby-aws-sdk 1.67.0; Query protocol). Run by run.sh:
#
#     ruby aws_sdk_v1_scenario.rb --endpoint http://127.0.0.1:PORT --name ruby-v1
#
# The SDK verifies the body MD5 of SendMessage, SendMessageBatch and ReceiveMessage itself
# (sqs_verify_checksums, on by default); the scenario checks the attribute MD5s. Its bundled API
# model (SQS 2012-11-05 as of 2014) has no PurgeQueue, TagQueue/ListQueueTags/UntagQueue or FIFO
# parameters (MessageGroupId, MessageDeduplicationId): those steps are left out, and a FIFO queue
# is only created and read back. It sends `Host: 127.0.0.1` without the port, so the server must
# build queue URLs with its listening port. Every request goes through a recording HTTP handler
# and the run fails unless all of them used the Query protocol.

require 'optparse'
require 'digest'
require 'json'
require 'aws-sdk-v1'

NON_EXISTENT = 'AWS.SimpleQueueService.NonExistentQueue'.freeze

class Failure < StandardError; end

def check(cond, message)
  raise Failure, message unless cond
end

def md5_of_attributes(attrs)
  buf = ''.b
  field = ->(s) { [s.bytesize].pack('N') + s.b }
  attrs.keys.map(&:to_s).sort.each do |name|
    a = attrs[name] || attrs[name.to_sym]
    buf << field.(name) << field.(a[:data_type])
    if a.key?(:binary_value)
      buf << "\x02".b << field.(a[:binary_value])
    else
      buf << "\x01".b << field.(a[:string_value])
    end
  end
  Digest::MD5.hexdigest(buf)
end

# Vectors from the protocol reference (section 6.4), as in python/common.py.
{
  { 'Foo' => { data_type: 'String', string_value: 'Bar' } } => 'ae7155c6026991b6d54b11589678bf9c',
  { 'timestamp' => { data_type: 'Number.java.lang.Long', string_value: '1493147359900' } } =>
    '2e2e4876d8e0bd6b8c2c8f556831c349',
  { 'b' => { data_type: 'Binary', binary_value: "\x00\x01\x02".b } } => '0911ac989fa4a4b3440f074ba9941547',
}.each do |attrs, want|
  abort 'md5_of_attributes self-test failed' unless md5_of_attributes(attrs) == want
end

# Records every request the SDK sends, to prove the protocol.
class RecordingHandler < AWS::Core::Http::NetHttpHandler
  attr_reader :requests

  def initialize(*args)
    super
    @requests = []
  end

  def handle(request, response, &block)
    @requests << [request.http_method, "#{request.endpoint}#{request.uri}", request.headers.to_h.dup,
                  request.body.to_s]
    super
  end
end

class Scenario
  ATTRS = {
    'color' => { data_type: 'String', string_value: "blue \u00e9\u6f22" },
    'timestamp' => { data_type: 'Number.java.lang.Long', string_value: '1493147359900' },
    'blob' => { data_type: 'Binary', binary_value: "\x00\x01\xfe\xff\x80\n\x7f".b },
  }.freeze
  BODY = "hello <localsqs> & \"friends\" \u00e9".freeze

  attr_reader :failures

  def initialize(endpoint, name)
    @name = name
    @prefix = "compat-#{name}-#{Process.pid}"
    uri = URI.parse(endpoint)
    @handler = RecordingHandler.new
    AWS.config(access_key_id: 'test', secret_access_key: 'test', region: 'us-east-1',
               sqs_endpoint: uri.host, sqs_port: uri.port, use_ssl: false,
               http_handler: @handler, max_retries: 0)
    @sqs = AWS::SQS.new
    @failures = []
  end

  def step(title)
    t0 = Time.now
    yield
    printf("  ok   %-30s (%.2fs)\n", title, Time.now - t0)
  rescue StandardError => e
    @failures << title
    printf("  FAIL %-30s %s: %s\n", title, e.class, e.message)
    if e.respond_to?(:http_response) && e.http_response
      printf("       HTTP %s body=%s\n", e.http_response.status, e.http_response.body.to_s[0, 400])
    end
    e.backtrace.first(4).each { |l| puts "       #{l}" }
  end

  def queue(suffix, attrs = {})
    @sqs.queues.create("#{@prefix}-#{suffix}", attrs)
  end

  def receive(q, opts = {})
    Array(q.receive_message({ limit: 10, wait_time_seconds: 0 }.merge(opts)))
  end

  def create_queues
    @std = queue('std')
    @fifo = queue('fifo.fifo', fifo_queue: 'true')
    check(@std.url.end_with?("/000000000000/#{@prefix}-std"), "queue URL #{@std.url}")
    check(URI.parse(@std.url).port == AWS.config.sqs_port,
          "queue URL #{@std.url} does not carry the server's port #{AWS.config.sqs_port} " \
          '(the SDK sent Host without a port)')
    urls = @sqs.queues.with_prefix(@prefix).map(&:url).sort
    check(urls == [@fifo.url, @std.url].sort, "ListQueues #{urls}")
    check(queue('std').url == @std.url, 'CreateQueue again returned another URL')
    check(@sqs.queues.named("#{@prefix}-std").url == @std.url, 'GetQueueUrl')
  end

  def send_receive_attributes
    # Through the client: Queue#send_message passes message_attributes on as they are.
    sent = @std.send_message(BODY, message_attributes: ATTRS)
    check(sent.md5 == Digest::MD5.hexdigest(BODY), "MD5OfMessageBody #{sent.md5}")
    resp = @sqs.client.send_message(queue_url: @std.url, message_body: 'second', message_attributes: ATTRS)
    check(resp[:md5_of_message_attributes] == md5_of_attributes(ATTRS),
          "MD5OfMessageAttributes #{resp[:md5_of_message_attributes]}, want #{md5_of_attributes(ATTRS)}")
    msgs = []
    deadline = Time.now + 5
    while msgs.size < 2 && Time.now < deadline
      msgs += receive(@std, attributes: [:all], message_attribute_names: ['All'], wait_time_seconds: 1)
    end
    check(msgs.size == 2, "received #{msgs.size} messages")
    m = msgs.find { |x| x.id == sent.message_id }
    check(m, "message #{sent.message_id} not received: #{msgs.map(&:id)}")
    check(m.body == BODY, "Body #{m.body.inspect}")
    got = {}
    m.message_attributes.each do |name, v|
      a = { data_type: v[:data_type] }
      if v[:binary_value]
        a[:binary_value] = v[:binary_value].b
      else
        a[:string_value] = v[:string_value]
      end
      got[name.to_s] = a
    end
    check(got == ATTRS, "MessageAttributes #{got.inspect}")
    check(m.receive_count == 1, "ApproximateReceiveCount #{m.receive_count}")
    check(m.sender_id && m.sent_timestamp && m.first_received_at, 'system attributes missing')
    # ReceivedMessage does not keep MD5OfMessageAttributes: read it from the client's response.
    m.visibility_timeout = 0
    raw = @sqs.client.receive_message(queue_url: @std.url, message_attribute_names: ['All'],
                                      max_number_of_messages: 10)[:messages]
    r = raw.find { |x| x[:message_id] == m.id }
    check(r, "message #{m.id} not received again after ChangeMessageVisibility 0")
    check(r[:md5_of_message_attributes] == md5_of_attributes(ATTRS),
          "received MD5OfMessageAttributes #{r[:md5_of_message_attributes]}, want #{md5_of_attributes(ATTRS)}")
    @std.batch_delete(*msgs.reject { |x| x.id == m.id }, r[:receipt_handle])
    check(receive(@std).empty?, 'queue not empty after delete')
  end

  def batches
    sent = @std.batch_send('batch-0', 'batch-1', 'batch-2') # the SDK checks each body MD5
    check(sent.size == 3, "batch_send #{sent.size}")
    resp = @sqs.client.send_message_batch(queue_url: @std.url, entries: [
      { id: 'a', message_body: 'batch-3', message_attributes: { 'n' => { data_type: 'Number', string_value: '7' } } },
    ])
    e = resp[:successful].first
    check(e[:md5_of_message_attributes] == md5_of_attributes('n' => { data_type: 'Number', string_value: '7' }),
          "entry MD5OfMessageAttributes #{e[:md5_of_message_attributes]}")
    got = {}
    deadline = Time.now + 5
    while got.size < 4 && Time.now < deadline
      receive(@std, wait_time_seconds: 1).each { |m| got[m.body] = m }
    end
    check(got.keys.sort == %w[batch-0 batch-1 batch-2 batch-3], "received #{got.keys.sort}")
    msgs = got.values_at('batch-0', 'batch-1', 'batch-2', 'batch-3')
    begin
      @std.batch_change_visibility(60, msgs[0], 'not-a-receipt-handle')
      raise Failure, 'batch_change_visibility with an invalid handle raised nothing'
    rescue AWS::SQS::Errors::BatchChangeVisibilityError => e
      f = e.failures
      check(f.size == 1 && f[0][:receipt_handle] == 'not-a-receipt-handle', "failures #{f}")
      check(f[0][:error_code] == 'ReceiptHandleIsInvalid' && f[0][:sender_fault] == true, "failure #{f[0]}")
    end
    begin
      @std.batch_delete(*msgs, 'not-a-receipt-handle')
      raise Failure, 'batch_delete with an invalid handle raised nothing'
    rescue AWS::SQS::Errors::BatchDeleteError => e
      f = e.failures
      check(f.size == 1 && f[0][:receipt_handle] == 'not-a-receipt-handle', "failures #{f}")
      check(f[0][:error_code] == 'ReceiptHandleIsInvalid' && f[0][:sender_fault] == true, "failure #{f[0]}")
    end
    check(receive(@std).empty?, 'queue not empty after batch_delete')
  end

  def long_poll
    result = nil
    t = Thread.new do
      t0 = Time.now
      msgs = receive(@std, wait_time_seconds: 10)
      result = [msgs, Time.now - t0]
    end
    sleep 0.5
    @std.send_message('wake-up')
    t.join(15)
    check(result, 'long poll did not return')
    msgs, elapsed = result
    check(msgs.map(&:body) == ['wake-up'], "long poll got #{msgs.map(&:body)}")
    check(elapsed > 0.3 && elapsed < 5, "long poll returned after #{elapsed}s")
    printf("       long poll woke after %.2fs\n", elapsed)
    msgs.each(&:delete)
  end

  def change_visibility
    sent = @std.send_message('vis')
    first = receive(@std, visibility_timeout: 30)
    check(first.map(&:id) == [sent.message_id], "first receive #{first.map(&:id)}")
    check(receive(@std).empty?, 'message visible during its visibility timeout')
    first[0].visibility_timeout = 0
    again = receive(@std, attributes: [:receive_count])
    check(again.map(&:id) == [sent.message_id], 'not receivable after ChangeMessageVisibility 0')
    check(again[0].receive_count == 2, "ApproximateReceiveCount #{again[0].receive_count}")
    again[0].delete
  end

  def queue_attributes
    check(@std.arn == "arn:aws:sqs:us-east-1:000000000000:#{@prefix}-std", "QueueArn #{@std.arn}")
    check(@std.visibility_timeout == 30, "VisibilityTimeout #{@std.visibility_timeout}")
    check(@std.maximum_message_size.positive?, "MaximumMessageSize #{@std.maximum_message_size}")
    check(@std.created_timestamp.is_a?(Time), "CreatedTimestamp #{@std.created_timestamp.inspect}")
    check(@std.approximate_number_of_messages.zero?, 'ApproximateNumberOfMessages')
    @std.visibility_timeout = 45
    @std.message_retention_period = 3600
    check(@std.visibility_timeout == 45, "VisibilityTimeout after set #{@std.visibility_timeout}")
    check(@std.message_retention_period == 3600, "MessageRetentionPeriod #{@std.message_retention_period}")
    attrs = @sqs.client.get_queue_attributes(queue_url: @fifo.url, attribute_names: ['All'])[:attributes]
    check(attrs['FifoQueue'] == 'true' && attrs['ContentBasedDeduplication'] == 'false', "fifo #{attrs}")
  end

  def expect_missing(what)
    yield
    raise Failure, "#{what} of a missing queue succeeded"
  rescue AWS::SQS::Errors::NonExistentQueue => e
    check(e.code == NON_EXISTENT, "#{what}: code #{e.code}")
    check(e.http_response.status == 400, "#{what}: HTTP #{e.http_response.status}")
    e
  end

  def missing_queue
    e = expect_missing('GetQueueUrl') { @sqs.queues.named("#{@prefix}-does-not-exist") }
    puts "       caught #{e.class}: code #{e.code}, HTTP #{e.http_response.status}"
    expect_missing('SendMessage') { @sqs.queues[@std.url.sub('-std', '-nope')].send_message('x') }
    check(!@sqs.queues[@std.url.sub('-std', '-nope')].exists?, 'Queue#exists? of a missing queue')
  end

  def delete_queues
    [@std, @fifo].each(&:delete)
    left = @sqs.queues.with_prefix(@prefix).map(&:url)
    check(left.empty?, "queues left #{left}")
    expect_missing('GetQueueAttributes of a deleted queue') { @std.visibility_timeout }
  end

  def classify(headers, body, url)
    target = headers.find { |k, _| k.to_s.casecmp('x-amz-target').zero? }&.last.to_s
    return ['json', target.sub('AmazonSQS.', '')] if target.start_with?('AmazonSQS.')
    return ['query', Regexp.last_match(1)] if body =~ /(?:^|&)Action=([A-Za-z]+)/
    [url.include?('Action=') ? 'query' : 'unknown', '?']
  end

  def protocol_check
    reqs = @handler.requests
    check(!reqs.empty?, 'no request was captured')
    method, url, headers, body = reqs[0]
    kind, = classify(headers, body, url)
    ct = headers.find { |k, _| k.to_s.casecmp('content-type').zero? }&.last
    host = headers.find { |k, _| k.to_s.casecmp('host').zero? }&.last
    puts "EVIDENCE #{@name}: #{method.upcase} #{url} -> #{kind.upcase} (Content-Type: #{ct}; " \
         "body=#{body[0, 80]})"
    kinds = Hash.new(0)
    ops = {}
    reqs.each do |_, u, h, b|
      k, op = classify(h, b, u)
      kinds[k] += 1
      ops[op] = true
    end
    check(kinds == { 'query' => reqs.size }, "expected every request to use query, saw #{kinds}")
    puts "       #{reqs.size} requests, all QUERY; Host header #{host.inspect}; operations: #{ops.keys.sort.join(' ')}"
  end

  def run
    deb = `dpkg-query -W -f='${Version}' ruby-aws-sdk 2>/dev/null`.strip
    puts "#{@name}: aws-sdk v1 #{AWS::VERSION} (Debian ruby-aws-sdk #{deb.empty? ? '?' : deb}), " \
         "Ruby #{RUBY_VERSION}, protocol expected QUERY"
    step('create queues') { create_queues }
    unless @failures.any?
      step('send/receive attributes') { send_receive_attributes }
      step('batch send/delete/visibility') { batches }
      step('long poll woken by send') { long_poll }
      step('change visibility') { change_visibility }
      step('queue attributes') { queue_attributes }
      step('missing queue error') { missing_queue }
      step('delete queues') { delete_queues }
    end
    step('protocol evidence') { protocol_check }
    @failures.empty?
  end
end

opts = {}
OptionParser.new do |o|
  o.on('--endpoint URL') { |v| opts[:endpoint] = v }
  o.on('--name NAME') { |v| opts[:name] = v }
end.parse!
abort 'usage: aws_sdk_v1_scenario.rb --endpoint URL --name NAME' unless opts[:endpoint] && opts[:name]
exit(Scenario.new(opts[:endpoint], opts[:name]).run ? 0 : 1)
