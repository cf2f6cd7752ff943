// DescribeShareGroupOffsets (key 90), versions 0-1 (KIP-932; v1 adds Lag, KIP-1226).
// Per group: the start offset of each share-partition asked for (Topics null:
// every share-partition with state), its leader epoch and, from v1, its lag
// (records at or above the start not yet acknowledged or archived, up to the
// high watermark). A share-partition without state: StartOffset -1.
// Unknown group: GROUP_ID_NOT_FOUND; unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse } from '../protocol/messages/describe-share-group-offsets.js';
import { toErrorPair } from './admin-errors.js';
import { SHARE_GROUPS_OFF } from './share-answers.js';

export const handler: ApiHandler<DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse, BrokerContext> = {
  apiKey: 90,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const share = broker.shareGroups;
    const groups = await Promise.all(req.groups.map(async (g) => {
      if (share === undefined || share === null) return { groupId: g.groupId, topics: [], ...SHARE_GROUPS_OFF };
      try {
        const topics = await share.admin.describeOffsets(g.groupId, g.topics);
        return {
          groupId: g.groupId,
          errorCode: 0,
          errorMessage: null,
          topics: topics.map((t) => ({
            topicName: t.topicName,
            topicId: t.topicId,
            partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, startOffset: p.startOffset, leaderEpoch: p.leaderEpoch, lag: p.lag, errorCode: p.errorCode, errorMessage: p.errorMessage })),
          })),
        };
      } catch (err) {
        return { groupId: g.groupId, topics: [], ...toErrorPair(err, ctx.log) };
      }
    }));
    return { throttleTimeMs: 0, groups };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, groups: req.groups.map((g) => ({ groupId: g.groupId, topics: [], errorCode, errorMessage: null })) };
  },
};
