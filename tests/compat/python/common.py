"""Checksums the SQS clients compare, computed independently of the server."""

import hashlib
import struct


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def md5_of_attributes(attrs):
    """MD5OfMessageAttributes: names sorted; each name, data type and value is written as a
    4-byte big-endian length followed by its bytes, with a transport byte (1 string, 2 binary)
    before the value."""
    buf = b""

    def field(data):
        return struct.pack(">I", len(data)) + data

    for name in sorted(attrs):
        value = attrs[name]
        buf += field(name.encode()) + field(value["DataType"].encode())
        if "BinaryValue" in value:
            raw = value["BinaryValue"]
            buf += b"\x02" + field(raw if isinstance(raw, bytes) else raw.encode())
        else:
            buf += b"\x01" + field(value["StringValue"].encode())
    return md5_hex(buf)


def _self_test():
    # Vectors from the protocol reference (section 6.4).
    assert md5_of_attributes({"Foo": {"DataType": "String", "StringValue": "Bar"}}) == \
        "ae7155c6026991b6d54b11589678bf9c"
    assert md5_of_attributes({"timestamp": {"DataType": "Number.java.lang.Long",
                                            "StringValue": "1493147359900"}}) == \
        "2e2e4876d8e0bd6b8c2c8f556831c349"
    assert md5_of_attributes({"b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\x02"}}) == \
        "0911ac989fa4a4b3440f074ba9941547"


_self_test()
