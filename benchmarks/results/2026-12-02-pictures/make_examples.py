import json, sys
from meshdoctor.hostfile.load import parse
from meshdoctor.model import Result
from meshdoctor.render.pictures import pairs_heatmap, mesh_graph
out = sys.argv[1]
pf = json.load(open(f'{out}/probe-pairs.json'))['probe']['pairs']
pairs_heatmap(pf, f"{out}/probe-pairs.png")

jaccl = parse(json.dumps({"backend": "jaccl", "hosts": [
  {"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [None, "rdma_en3", "rdma_en4", "rdma_en5"]},
  {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en3", None, "rdma_en4", "rdma_en5"]},
  {"ssh": "m3", "ips": ["10.0.0.3"], "rdma": ["rdma_en3", "rdma_en4", None, "rdma_en5"]},
  {"ssh": "m4", "ips": ["10.0.0.4"], "rdma": ["rdma_en3", "rdma_en4", "rdma_en5", None]}]}))
res = [Result("MD404", "fleet.edges", "fail", "edge m2-m3 is not active", host="m2", evidence={"edge": ["m2", "m3"], "hosts": ["m2", "m3"]}),
       Result("MD101", "node.x", "fail", "m4 down", host="m4")]
mesh_graph(jaccl, res, f"{out}/mesh-jaccl.png"); mesh_graph(jaccl, res, f"{out}/mesh-jaccl.svg")
ring = parse(json.dumps([{"ssh": f"node{i}", "ips": [f"10.0.1.{i}"]} for i in range(6)]))
res2 = [Result("MD402", "fleet.routes", "fail", "node2 cannot reach node3", host="node2", evidence={"hosts": ["node2", "node3"]})]
mesh_graph(ring, res2, f"{out}/mesh-ring.png")
