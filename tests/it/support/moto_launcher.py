"""Starts moto_server for the controller's tests, with the ELBv2 fields moto 5.2 drops kept.

moto 5.2 reads neither CreateTargetGroup's TargetControlPort nor a target's QuicServerId: it
stores neither and describes neither back. The controller replaces a target group whose
described target-control port differs from the model's (as upstream does), so against plain
moto a target group with a control port would be replaced on every reconcile; and QUIC targets
would lose their server ids. Each patch below keeps one such field (botocore's model already
has both members, so moto's serializer shows them once the objects carry them); the rest of
moto is untouched.

Run with the Python that runs moto_server:
    python moto_launcher.py -H 127.0.0.1 -p PORT
(tests/it/support/moto.rs does, with the same arguments and environment as moto_server.)
"""

import sys


def keep_target_control_port():
    """CreateTargetGroup's TargetControlPort, kept on the target group and described back."""
    from moto.elbv2.responses import ELBV2Response

    create = ELBV2Response.create_target_group

    def create_target_group(self):
        result = create(self)
        port = self._get_param("TargetControlPort")
        if port is not None:
            name = self._get_param("Name")
            for tg in self.elbv2_backend.target_groups.values():
                if tg.name == name:
                    tg.target_control_port = int(port)
        return result

    ELBV2Response.create_target_group = create_target_group


def keep_quic_server_id():
    """RegisterTargets' QuicServerId, kept on the target and shown by DescribeTargetHealth."""
    from moto.elbv2.models import FakeHealthStatus, FakeTargetGroup

    register = FakeTargetGroup.register
    health_for = FakeTargetGroup.health_for

    def register_with_ids(self, targets):
        register(self, targets)
        for target in targets:
            quic = target.get("QuicServerId")
            if quic and target["Id"] in self.targets:
                self.targets[target["Id"]]["QuicServerId"] = quic

    def health_with_ids(self, target, ec2_backend):
        status = health_for(self, target, ec2_backend)
        registered = self.targets.get(target["Id"]) or {}
        status.quic_server_id = registered.get("QuicServerId")
        return status

    def target(self):
        out = {"Id": self.instance_id, "Port": self.port}
        quic = getattr(self, "quic_server_id", None)
        if quic:
            out["QuicServerId"] = quic
        return out

    FakeTargetGroup.register = register_with_ids
    FakeTargetGroup.health_for = health_with_ids
    FakeHealthStatus.target = property(target)


def main():
    keep_target_control_port()
    keep_quic_server_id()
    from moto.server import main as serve

    serve(sys.argv[1:])


if __name__ == "__main__":
    main()
