#include "distributed/exchange.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/gpu_runtime.h"

namespace nf {

void evaluate_parts(const ExchangePlan& plan, const std::vector<PartArrays*>& parts, Transport& t) {
  const int n = static_cast<int>(plan.parts.size());
  if (parts.size() != plan.parts.size()) throw std::logic_error("evaluate_parts: one device per part of the plan");
  // 1-2. Halo bodies: gathered by their owners, received in place.
  for (int g = 0; g < n; ++g)
    if (parts[g])
      for (std::size_t k = 0; k < plan.parts[g].peers.size(); ++k)
        if (!plan.parts[g].peers[k].send.empty()) parts[g]->pack(k);
  t.group_start();
  for (int g = 0; g < n; ++g) {
    PartArrays* d = parts[g];
    if (!d) continue;
    const std::size_t bb = d->body_bytes();
    for (std::size_t k = 0; k < plan.parts[g].peers.size(); ++k) {
      const PeerTransfer& p = plan.parts[g].peers[k];
      if (!p.send.empty()) t.send(g, p.peer, d->send_buffer(k), p.send.size() * bb);
      if (p.recv_count) t.recv(g, p.peer, d->bodies() + p.recv_begin * bb, p.recv_count * bb);
    }
  }
  t.group_end();
  // 3. The kernels.
  for (int g = 0; g < n; ++g)
    if (parts[g]) parts[g]->compute();
  if (plan.cross != CrossPairs::once) return;
  // 4. Counterforces on halo particles go back to their owners and are added there.
  t.group_start();
  for (int g = 0; g < n; ++g) {
    PartArrays* d = parts[g];
    if (!d) continue;
    const std::size_t ab = d->acc_bytes();
    for (std::size_t k = 0; k < plan.parts[g].peers.size(); ++k) {
      const PeerTransfer& p = plan.parts[g].peers[k];
      if (p.recv_count) t.send(g, p.peer, d->acc() + p.recv_begin * ab, p.recv_count * ab);
      if (!p.send.empty()) t.recv(g, p.peer, d->counterforce_buffer(k), p.send.size() * ab);
    }
  }
  t.group_end();
  for (int g = 0; g < n; ++g)
    if (parts[g])
      for (std::size_t k = 0; k < plan.parts[g].peers.size(); ++k)
        if (!plan.parts[g].peers[k].send.empty()) parts[g]->add_counterforces(k);
}

void LoopbackTransport::group_start() {
  if (open_) throw std::logic_error("LoopbackTransport: group_start inside a group");
  open_ = true;
}

void LoopbackTransport::send(int part, int peer, const void* data, std::size_t bytes) {
  if (!open_) throw std::logic_error("LoopbackTransport: send outside a group");
  if (!sends_.emplace(std::make_pair(part, peer), std::make_pair(data, bytes)).second)
    throw std::logic_error("LoopbackTransport: two sends from part " + std::to_string(part) + " to " +
                           std::to_string(peer));
}

void LoopbackTransport::recv(int part, int peer, void* data, std::size_t bytes) {
  if (!open_) throw std::logic_error("LoopbackTransport: recv outside a group");
  if (!recvs_.emplace(std::make_pair(peer, part), std::make_pair(data, bytes)).second)
    throw std::logic_error("LoopbackTransport: two receives of part " + std::to_string(part) + " from " +
                           std::to_string(peer));
}

void LoopbackTransport::group_end() {
  if (!open_) throw std::logic_error("LoopbackTransport: group_end without group_start");
  open_ = false;
  const auto sends = std::move(sends_);  // the next group starts empty, whatever happens here
  const auto recvs = std::move(recvs_);
  sends_.clear();
  recvs_.clear();
  if (sends.size() != recvs.size()) throw std::logic_error("LoopbackTransport: sends and receives do not pair up");
  for (const auto& [route, in] : recvs) {  // every message checked before the first is moved
    const auto out = sends.find(route);
    if (out == sends.end() || out->second.second != in.second)
      throw std::logic_error("LoopbackTransport: receive of part " + std::to_string(route.second) + " from " +
                             std::to_string(route.first) + " (" + std::to_string(in.second) +
                             " bytes) has no matching send");
  }
  for (const auto& [route, in] : recvs) {
    if (in.second) copy(in.first, sends.at(route).first, in.second);
    ++messages_;
    bytes_ += in.second;
  }
}

void LoopbackTransport::copy(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

void DeviceLoopbackTransport::copy(void* dst, const void* src, std::size_t bytes) {
  gpu::require("the device loopback transport");  // a CUDA build on a machine without a GPU too
  gpu::copy_on_device(dst, src, bytes);            // cudaMemcpyAsync, device to device, default stream
}

}  // namespace nf
