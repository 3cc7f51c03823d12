// Limits of the strata.v1 wire contract, shared by the node's adapters and
// the client. Plain constants; no generated or gRPC types, so any target may
// include this header.
//
// Who enforces what:
//   kMaxMessageBytes  gRPC itself, on both sides (max send and receive message
//                     size): a bigger message fails with RESOURCE_EXHAUSTED
//                     before any strata code sees it.
//   the counts        the node's adapter (store/rpc) checks them before calling
//                     the engine, and answers INVALID_ARGUMENT naming the field,
//                     the count and the limit (CheckCount in repeated_convert.h);
//                     the client checks the same limits before sending.
//
// Every count is chosen so that the largest message it allows stays under
// kMaxMessageBytes. limits_test.cc builds those worst cases (every varint at
// its longest; token fields are 4 bytes a token) and measures them; its figures:
//
//   message            worst case                                       bytes
//   -----------------  -----------------------------------------------  ---------
//   BeginPutRequest    kMaxTokensPerRequest tokens (4 B each) +          16.0 MiB
//                      kMaxChunksPerBlob checksums (8 B each)
//   MatchRequest       kMaxTokensPerRequest tokens                        8.0 MiB
//   MatchResponse      kMaxMatchSegments TEXT segments carrying          11.3 MiB
//                      kMaxMatchTextTokens tokens between them
//   PrefetchRequest    kMaxTokensPerRequest tokens                        8.0 MiB
//   RebuildTask        kMaxRebuildSequenceTokens sequence tokens +       16.0 MiB
//                      kMaxChunksPerBlob checksums (one task)
//   PullRebuildTasks-  tasks just under kPullResponseFillBytes, then     31.0 MiB
//   Response           one more of the largest size
//   ReadRequest        kMaxReadRanges ranges                              0.2 MiB
//   ReadResponse       kMaxChunksPerRead checksums, each chunk its own   28.2 MiB
//                      layer range, over kMaxReadRanges grants
//   StatResponse       one record with kMaxTokensPerRequest tokens        8.0 MiB
//   ListResponse       kMaxListLimit records without tokens               0.6 MiB
//   TiersResponse      every tier, kMaxCurvePoints points in the MRC      0.1 MiB
//                      and in each tier's curve, kMaxAdviceBytes advice
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::proto {

// Largest serialized message either side sends or accepts (gRPC's default is
// 4 MiB; strata's token lists and checksum arrays need more).
inline constexpr int kMaxMessageBytes = 32 << 20;

// Token ids in one request (Match, BeginPut) or Stat answer: 2M tokens, about
// 4x the longest contexts in use.
inline constexpr size_t kMaxTokensPerRequest = size_t{1} << 21;

// Chunks (one layer of one page) in one blob: BeginPut's checksum count,
// num_layers * pages. E.g. 80 layers x 13,107 pages of 16 tokens. Larger
// writes are split into several blobs chained by Parent.
inline constexpr size_t kMaxChunksPerBlob = size_t{1} << 20;

// Queries in one MatchSegments call.
inline constexpr size_t kMaxSegmentQueries = 4096;

// Segments in one MatchResponse; beyond it the match is cut short at a
// segment boundary and MatchResponse.truncated is set.
inline constexpr size_t kMaxMatchSegments = size_t{1} << 16;

// Token ids carried by the TEXT segments of one MatchResponse, summed. A TEXT segment's
// tokens are the query's own tokens at its pages, so a query within kMaxTokensPerRequest
// never reaches it; it guards the answer's size all the same: the segment that would pass
// it is left out, with everything after it, and MatchResponse.truncated is set.
inline constexpr size_t kMaxMatchTextTokens = kMaxTokensPerRequest;

// PullRebuildTasksRequest: max_tasks in 1..kMaxRebuildTasksPerPull, wait_ms at most
// kMaxRebuildWaitMs (the engine waits at most 60 s for a task); beyond: INVALID_ARGUMENT.
inline constexpr uint32_t kMaxRebuildTasksPerPull = 1024;
inline constexpr uint32_t kMaxRebuildWaitMs = 60'000;

// A PullRebuildTasksResponse stops taking tasks once its tasks' encoded size reaches this
// (it may then carry fewer than max_tasks: pull again). One task is at most ~16 MiB (its
// sequence within kMaxTokensPerRequest tokens, kMaxChunksPerBlob checksums), so the answer
// stays under kMaxMessageBytes. A task whose sequence is longer than kMaxTokensPerRequest
// tokens (beyond what any Match can query) is never sent: the node logs it and lets it
// expire (after its attempts it is dropped).
inline constexpr size_t kPullResponseFillBytes = size_t{15} << 20;
inline constexpr size_t kMaxRebuildSequenceTokens = kMaxTokensPerRequest;

// ReadRange entries in one ReadRequest (one lease).
inline constexpr size_t kMaxReadRanges = 4096;

// Chunks covered by one ReadRequest: the sum over its ranges of
// (layer_end - layer_begin) * num_pages, i.e. the checksums in its answer.
// E.g. 80 layers x 13,107 pages; a larger read takes several Reads.
inline constexpr size_t kMaxChunksPerRead = size_t{1} << 20;

// ListRequest.limit: 0 means the default; larger values are clamped.
inline constexpr uint32_t kDefaultListLimit = 100;
inline constexpr uint32_t kMaxListLimit = 1000;

// TiersResponse: points of its miss-ratio curve (MissRatioCurve.points) and of each
// TierCurve, and bytes of a TierCurve's advice. The node thins a longer curve to this many
// points, evenly spaced and keeping both ends, and cuts longer advice at a UTF-8 boundary.
inline constexpr size_t kMaxCurvePoints = 1024;
inline constexpr size_t kMaxAdviceBytes = 1024;

// Data plane: (offset, length) ranges in one FETCH active message
// (store/dataplane/wire.h). A ReadGrant has at most kMaxLayers (1024) layer
// ranges, so one grant always fits one FETCH.
inline constexpr size_t kMaxFetchRanges = 4096;

}  // namespace strata::proto
