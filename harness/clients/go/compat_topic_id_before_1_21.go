//go:build kgo_before_1_21

package main

import "github.com/twmb/franz-go/pkg/kmsg"

// The kmsg of franz-go before v1.21.0 has no OffsetFetch v10, so kgo sends v9 at most and the topic
// is named by its name alone: there is no ID to set or to read back.
func setOffsetFetchTopicID(*kmsg.OffsetFetchRequestGroupTopic, [16]byte) {}

func offsetFetchTopicID(*kmsg.OffsetFetchResponseGroupTopic) [16]byte { return [16]byte{} }
