/**
 * Which interfaces the mtu collector reports. The default leaves out per-pod and per-VM host
 * interfaces, which come and go with workloads and would make cardinality unbounded, and the
 * container overlay devices, which are not the training fabric:
 *   veth*  container veth pairs (Docker, most CNIs)      cali*  Calico
 *   lxc*   Cilium endpoints                               tap*   KubeVirt/Kata/QEMU taps
 *   vnet*  libvirt guests                                 gke*   GKE pod veths
 *   azv*   Azure CNI pod veths
 *   tun* flannel* cni* vxlan* genev*   overlay and tunnel devices (tunl0, flannel.1, cni0, ...)
 * Physical NICs, IPoIB, bonds, VLANs, docker0 and cilium_* stay.
 */
export const DEFAULT_DEVICE_EXCLUDE = /^(veth|cali|lxc|tap|tun|flannel|cni|vxlan|genev|vnet|gke|azv)/;

export interface DeviceFilter {
  /** When set, only devices matching it are kept. */
  include?: RegExp;
  /** Devices matching it are dropped (applied after include). Default DEFAULT_DEVICE_EXCLUDE. */
  exclude?: RegExp;
}

export function keepDevice(device: string, f: DeviceFilter): boolean {
  const exclude = f.exclude ?? DEFAULT_DEVICE_EXCLUDE;
  if (f.include && !matches(f.include, device)) return false;
  return !matches(exclude, device);
}

/** RegExp.test without the lastIndex trap of /g and /y expressions. */
function matches(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  return re.test(s);
}
