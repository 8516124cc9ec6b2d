"""DreamerV3's imagined actor-critic (agent.ImagActorCritic, VFunction, jaxutils.Moments, DiscDist), transcribed
small: a lambda return by a Python loop, percentile return normalisation (perc_ema with stopped statistics), the
REINFORCE actor with sg(adv) and an entropy bonus, and the critic's twohot log-likelihood of the stopped return in
symlog space with the slow critic as a regulariser. Networks are dict-params stubs; time is the leading axis."""

import jax
import jax.numpy as jnp

f32 = jnp.float32
i32 = jnp.int32
sg = lambda x: jax.tree_util.tree_map(jax.lax.stop_gradient, x)

HORIZON = 333
RETURN_LAMBDA = 0.95
ACTENT = 3e-4
SLOWREG = 1.0


def symlog(x):
  return jnp.sign(x) * jnp.log1p(jnp.abs(x))


def symexp(x):
  return jnp.sign(x) * (jnp.exp(jnp.abs(x)) - 1)


class DiscDist:

  def __init__(self, logits, dims=0, low=-20, high=20, transfwd=symlog, transbwd=symexp):
    self.logits = logits
    self.probs = jax.nn.softmax(logits)
    self.bins = jnp.linspace(low, high, logits.shape[-1])
    self.transfwd = transfwd
    self.transbwd = transbwd

  def mean(self):
    return self.transbwd((self.probs * self.bins).sum(-1))

  def log_prob(self, x):
    x = self.transfwd(x)
    below = (self.bins <= x[..., None]).astype(i32).sum(-1) - 1
    above = len(self.bins) - (self.bins > x[..., None]).astype(i32).sum(-1)
    below = jnp.clip(below, 0, len(self.bins) - 1)
    above = jnp.clip(above, 0, len(self.bins) - 1)
    equal = (below == above)
    dist_to_below = jnp.where(equal, 1, jnp.abs(self.bins[below] - x))
    dist_to_above = jnp.where(equal, 1, jnp.abs(self.bins[above] - x))
    total = dist_to_below + dist_to_above
    weight_below = dist_to_above / total
    weight_above = dist_to_below / total
    target = (
        jax.nn.one_hot(below, len(self.bins)) * weight_below[..., None] +
        jax.nn.one_hot(above, len(self.bins)) * weight_above[..., None])
    log_pred = self.logits - jax.scipy.special.logsumexp(self.logits, -1, keepdims=True)
    return (target * log_pred).sum(-1)


class CategoricalPolicy:

  def __init__(self, logits):
    self.logits = logits

  def log_prob(self, action):
    return (jax.nn.log_softmax(self.logits) * action).sum(-1)

  def entropy(self):
    logp = jax.nn.log_softmax(self.logits)
    return -(jnp.exp(logp) * logp).sum(-1)


class Moments:
  """perc_ema: the 5th and 95th percentiles of the stopped returns, averaged into running statistics."""

  def __init__(self, low, high, decay=0.99, max=1.0, perclo=5, perchi=95):
    self.low, self.high, self.decay, self.max = low, high, decay, max
    self.perclo, self.perchi = perclo, perchi

  def __call__(self, x):
    self.update(x)
    return self.stats()

  def update(self, x):
    x = sg(x.astype(f32))
    m = self.decay
    self.low = m * self.low + (1 - m) * jnp.percentile(x, self.perclo)
    self.high = m * self.high + (1 - m) * jnp.percentile(x, self.perchi)

  def stats(self):
    invscale = jnp.maximum(1 / self.max, self.high - self.low)
    return sg(self.low), sg(invscale)


def critic_net(params, feat):
  return DiscDist(jnp.tanh(feat @ params["w1"]) @ params["w2"])


def actor_net(params, feat):
  return CategoricalPolicy(jnp.tanh(feat @ params["w1"]) @ params["w2"])


def score(params, traj):
  rew = traj["reward"][1:]
  discount = 1 - 1 / HORIZON
  disc = traj["cont"][1:] * discount
  value = critic_net(params["critic"], traj["feat"]).mean()
  vals = [value[-1]]
  interm = rew + disc * value[1:] * (1 - RETURN_LAMBDA)
  for t in reversed(range(len(disc))):
    vals.append(interm[t] + disc[t] * RETURN_LAMBDA * vals[-1])
  ret = jnp.stack(list(reversed(vals))[:-1])
  return rew, ret, value[:-1]


def actor_loss(params, traj, retnorm_low, retnorm_high):
  rew, ret, base = score(params, traj)
  offset, invscale = Moments(retnorm_low, retnorm_high)(ret)
  normed_ret = (ret - offset) / invscale
  normed_base = (base - offset) / invscale
  adv = jnp.stack([(normed_ret - normed_base) * 1.0 / 1.0]).sum(0)
  policy = actor_net(params["actor"], sg(traj["feat"]))
  logpi = policy.log_prob(sg(traj["action"]))[:-1]
  loss = -logpi * sg(adv)
  ent = policy.entropy()[:-1]
  loss -= ACTENT * ent
  loss *= sg(traj["weight"])[:-1]
  return loss.mean()


def critic_loss(params, slow_params, traj):
  _, target, _ = score(params, traj)
  traj = {k: v[:-1] for k, v in traj.items()}
  dist = critic_net(params["critic"], traj["feat"])
  loss = -dist.log_prob(sg(target))
  reg = -dist.log_prob(sg(critic_net(slow_params, traj["feat"]).mean()))
  loss += SLOWREG * reg
  loss = (loss * sg(traj["weight"])).mean()
  return loss


def _params(seed, feat=4, hidden=5, out=7):
  k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
  return {"w1": jax.random.normal(k1, (feat, hidden)) * 0.7, "w2": jax.random.normal(k2, (hidden, out)) * 0.7}


def _traj():
  k = jax.random.split(jax.random.PRNGKey(12), 3)
  actions = jax.nn.one_hot(jnp.array([[0, 2], [1, 1], [2, 0], [0, 1], [1, 2]]), 3)
  return {"feat": jax.random.normal(k[0], (5, 2, 4)), "action": actions,
          "reward": jax.random.normal(k[1], (5, 2)) * 2.0,
          "cont": jnp.array([[1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
          "weight": jnp.array([[1.0, 1.0], [1.0, 1.0], [1.0, 0.9], [0.9, 0.8], [0.8, 0.7]])}


def actor_example():
  return ({"critic": _params(1), "actor": _params(2, out=3)}, _traj(), jnp.array(-0.5), jnp.array(1.5))


def critic_example():
  return ({"critic": _params(1)}, _params(3), _traj())
