"""Starts moto_server for the controller's tests, with the ELBv2 fields moto 5.2 drops kept
and the QUIC protocols it refuses accepted.

moto 5.2 reads neither CreateTargetGroup's TargetControlPort nor a target's QuicServerId: it
stores neither and describes neither back. The controller replaces a target group whose
described target-control port differs from the model's (as upstream does), so against plain
moto a target group with a control port would be replaced on every reconcile; and QUIC targets
would lose their server ids. Each patch below keeps one such field (botocore's model already
has both members, so moto's serializer shows them once the objects carry them).

moto also refuses Protocol=QUIC and TCP_QUIC in CreateTargetGroup and CreateListener (its lists
of valid protocols predate them), so a QUIC Service could not be deployed on it at all;
`accept_quic_protocols` lets both through. The rest of moto is untouched.

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
        # moto 5.1.0 keys targets `id` and renders templates that have no QuicServerId:
        # there the id is simply not shown (rather than DescribeTargetHealth failing).
        registered = self.targets.get(target.get("Id")) or {}
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


# The protocol moto already knows that each QUIC protocol is built on: what AWS does for a
# QUIC (TCP_QUIC) target group or listener is, for everything moto checks, what it does for a
# UDP (TCP_UDP) one.
QUIC_STAND_INS = {"QUIC": "UDP", "TCP_QUIC": "TCP_UDP"}


def accept_quic_protocols():
    """CreateTargetGroup and CreateListener with Protocol QUIC or TCP_QUIC, described back so.

    moto checks the protocol against fixed lists inside `create_target_group` (and again for
    the health-check protocol, which AWS never allows to be QUIC, so that check stays) and
    `_validate_port_and_protocol` (listeners: NLB only), and derives the target group's
    defaults from it (health check TCP, interval 30 s, 2 unhealthy; `stickiness.type`
    source_ip). Each create runs unchanged with the stand-in protocol, so every check and
    default is the one for UDP / TCP_UDP, as on AWS; then the stored object's protocol is set
    back to what was asked, which DescribeTargetGroups and DescribeListeners (and the create
    responses) show. moto does not compare a listener's protocol with its target groups'
    (AWS does; the controller never mixes them), so nothing there to adjust. A refusal
    message (e.g. a QUIC listener on an ALB) names the stand-in.

    Both are methods of `ELBv2Backend` on moto 5.1 and 5.2; the wrappers take `protocol` by
    name as moto's responses pass it. A moto where either name or parameter is missing stops
    the launcher here rather than starting a server that refuses QUIC.
    """
    import inspect

    from moto.elbv2.models import ELBv2Backend

    create_tg = getattr(ELBv2Backend, "create_target_group", None)
    create_listener = getattr(ELBv2Backend, "create_listener", None)
    if create_tg is None or create_listener is None:
        raise SystemExit(
            "moto_launcher: moto.elbv2.models.ELBv2Backend has no create_target_group or "
            "create_listener; accept_quic_protocols needs updating for this moto"
        )
    tg_params = inspect.signature(create_tg).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in tg_params.values()):
        raise SystemExit(
            "moto_launcher: ELBv2Backend.create_target_group no longer takes **kwargs "
            "(protocol=...); accept_quic_protocols needs updating for this moto"
        )
    if list(inspect.signature(create_listener).parameters)[1:3] != [
        "load_balancer_arn",
        "protocol",
    ]:
        raise SystemExit(
            "moto_launcher: ELBv2Backend.create_listener(load_balancer_arn, protocol, ...) "
            "changed; accept_quic_protocols needs updating for this moto"
        )

    def restore(obj, asked, stand_in):
        # `protocol` is what moto describes; without it, setting one would change nothing.
        if not hasattr(obj, "protocol"):
            raise RuntimeError(
                f"moto_launcher: moto's {type(obj).__name__} has no `protocol`; "
                "accept_quic_protocols needs updating for this moto"
            )
        # Where moto decided the protocol itself (an `alb` target group is TCP), it stays.
        if obj.protocol == stand_in:
            obj.protocol = asked
        return obj

    def create_target_group(self, name, **kwargs):
        asked = kwargs.get("protocol")
        stand_in = QUIC_STAND_INS.get(asked)
        if stand_in is None:
            return create_tg(self, name, **kwargs)
        kwargs["protocol"] = stand_in
        return restore(create_tg(self, name, **kwargs), asked, stand_in)

    def create_listener_quic(self, load_balancer_arn, protocol, *args, **kwargs):
        stand_in = QUIC_STAND_INS.get(protocol)
        if stand_in is None:
            return create_listener(self, load_balancer_arn, protocol, *args, **kwargs)
        listener = create_listener(self, load_balancer_arn, stand_in, *args, **kwargs)
        return restore(listener, protocol, stand_in)

    ELBv2Backend.create_target_group = create_target_group
    ELBv2Backend.create_listener = create_listener_quic


def main():
    keep_target_control_port()
    keep_quic_server_id()
    accept_quic_protocols()
    from moto.server import main as serve

    serve(sys.argv[1:])


if __name__ == "__main__":
    main()
